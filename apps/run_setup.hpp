// The steps `train` and `serve` share: config with overrides, data, job; and reporting the outcome.
#pragma once

#include <string>
#include <vector>

#include "actors/messages.hpp"
#include "actors/training_job.hpp"
#include "io/config.hpp"
#include "io/dataset.hpp"
#include "model/result.hpp"

namespace psgrad {

struct RunOptions {
  std::string config_path;
  std::string mode;  // empty: the config's
  int workers = 0;   // 0: the config's
  std::vector<std::string> overrides;
  std::string data_dir;
  std::string save_weights;  // raw final weights, for tests and tools
};

struct PreparedRun {
  Config config;
  DataSplit data;
  TrainingJob job;
};

// --mode and --workers are shorthands for overrides, so they get the config's checks.
Result<PreparedRun> prepare_run(const RunOptions& options);

void print_run_header(const PreparedRun& run);
// Prints the summary line and saves the weights if asked; returns the process exit code.
int finish_run(const Result<TrainingSummary>& summary, const PreparedRun& run, const RunOptions& options);

}  // namespace psgrad
