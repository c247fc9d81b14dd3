// The steps `train` and `serve` share: config with overrides, data, job; and reporting the outcome.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "payloads/messages.hpp"
#include "actors/trace_recorder.hpp"
#include "actors/training_job.hpp"
#include "apps/best_weights.hpp"
#include "apps/run_output.hpp"
#include "apps/sparse_data.hpp"
#include "io/config.hpp"
#include "io/named_datasets.hpp"
#include "model/parameter_layout.hpp"
#include "model/result.hpp"
#include "model/sparse_model.hpp"

namespace psgrad {

struct RunOptions {
  std::string config_path;
  std::string mode;  // empty: the config's
  int workers = 0;   // 0: the config's
  std::vector<std::string> overrides;
  std::vector<FlagSetting> flags;  // --bind, --port and the like, each standing for a config key
  std::string data_dir;
  std::string save_weights;  // raw final weights, for tests and tools
  std::string save_model;    // a model file for `psgrad eval` and `psgrad predict`
  std::string command = "train";  // "train" or "serve", recorded in the metrics file
  bool worker_processes_here = false;  // train --processes: every worker is a process on this machine too
  Verbosity verbosity = Verbosity::normal;
  std::optional<std::string> metrics_path;  // unset: runs/<UTC time>-<mode>.jsonl; empty: none
  std::string trace_path;  // a Chrome trace of the run (JSON); empty: none
  // How this run is started again, for the hint an interrupted run prints ("psgrad train --processes");
  // empty: "psgrad <command>".
  std::string resume_command;
  std::string tensorboard_dir;  // a folder for TensorBoard event files; empty: none
};

// What a run of a model with embedding tables has beyond a dense run's (apps/tables_run.hpp).
struct TablesRun {
  SparseDataSplit data;                      // its examples in named columns, with the class names
  std::shared_ptr<const SparseModel> model;  // built for the data's columns, to check checkpoints
  std::string row_optimizer;                 // RowOptimizer::name() of its tables
  std::uint64_t table_floats = 0;            // every table's nV x width
};

struct PreparedRun {
  Config config;
  // render_config(config), rendered once: the metrics file, checkpoints, model files and the workers
  // all get the same text.
  std::string config_text;
  DataSplit data;
  // The config is the job: its sections are what the actors read.
  const TrainingJob& job() const { return config; }
  // The model's layout for the data's shape, built once, to check checkpoints and describe model files.
  ParameterLayout layout;
  std::shared_ptr<RunOutput> output;  // console lines and the metrics file
  std::shared_ptr<TraceRecorder> trace;  // null without --trace
  // training.patience / training.save_best: null when neither is set.
  std::shared_ptr<BestWeights> best;
  // A model with embedding tables: its data and tables (data above then only describes them).
  std::optional<TablesRun> tables;
};

// The options' flags with --mode and --workers as the config keys they stand for.
std::vector<FlagSetting> run_flags(const RunOptions& options);

// --mode and --workers stand for config keys, so they get the config's checks. Without --config the
// config inside the checkpoint at resume_path is the run's (apps/run_config.hpp). Opens the metrics file
// and writes its "run" line. A model with embedding tables is prepared by prepare_tables_run.
Result<PreparedRun> prepare_run(const RunOptions& options, const std::string& resume_path);
// The same for a config already parsed and examples already in memory (the Python module's arrays):
// the same checks of the outputs, the machine's memory and the plan, the same model and output.
Result<PreparedRun> prepare_run_with_data(const RunOptions& options, Config config, DataSplit data);

// The program as invoked (apps/invoked_program.hpp) with `command` ("train --processes") and what else
// the run needs to start again from a checkpoint (--data-dir): the config, --set overrides included, is
// in the checkpoint.
std::string resume_command(const RunOptions& options, const std::string& command);

// The console and the metrics file (with its "run" line), the TensorBoard folder if asked for.
Result<std::shared_ptr<RunOutput>> open_run_output(const RunOptions& options, const std::string& config_text,
                                                   const TrainingJob& job, const std::string& data_description);
// "<mode> summary: workers ..., steps ..., final accuracy ...": the line a run ends with.
std::string summary_line(const TrainingSummary& summary, std::size_t workers);

void print_run_header(const PreparedRun& run);
// The weights a run keeps: with training.save_best the best evaluated ones, else the final ones.
Weights kept_weights(const TrainingSummary& summary, const PreparedRun& run);
// Writes the model file of the weights a run keeps (--save); a model with tables saves its tables too.
using ModelSaver = std::function<Status(const std::string& path, const Weights& kept)>;

// Prints the summary line, records the summary, saves the weights and model if asked (with `save`,
// else as a dense model: save_model); returns the process exit code. Every model's runs end here.
int finish_run(const Result<TrainingSummary>& summary, const PreparedRun& run, const RunOptions& options,
               const ModelSaver& save = {});

}  // namespace psgrad
