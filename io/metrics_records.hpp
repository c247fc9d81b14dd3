// The records of a metrics file (JSON lines): one "run" line, one "eval" line per evaluation, one "summary".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace psgrad {

// The run line's "format": readers refuse files without it.
constexpr const char* metrics_format = "psgrad-metrics/1";

struct MetricsRun {
  std::string command;  // "train" or "serve"
  std::string mode;     // "sync" or "async"
  std::uint64_t num_workers = 0;
  std::uint64_t iterations = 0;
  std::string config_hash;  // hash_hex(fnv1a(config))
  std::string config;       // the resolved config TOML
  std::string data;         // the data set's description
  std::string start_time;   // UTC, ISO 8601
};

// Per worker (by index): dropped gradients (sync with backup workers), mean compute and wait times
// (milliseconds); and how many applied gradients had each staleness (the last bucket: that or more).
struct MetricsWorkers {
  std::vector<std::uint64_t> dropped_per_worker;
  std::vector<double> compute_ms_mean_per_worker;
  std::vector<double> wait_ms_mean_per_worker;
  std::vector<std::uint64_t> staleness_histogram;
};

struct MetricsEval {
  std::uint64_t iteration = 0;
  std::uint64_t version = 0;
  double wall_seconds = 0.0;
  std::uint64_t samples = 0;
  double dev_accuracy = 0.0;
  double dev_loss = 0.0;
  double train_loss = 0.0;
  double staleness_mean = 0.0;
  double staleness_max = 0.0;
  std::vector<std::uint64_t> gradients_per_worker;
  bool final = false;
  MetricsWorkers workers;
};

struct MetricsSummary {
  std::string mode;
  std::uint64_t steps = 0;
  std::uint64_t samples = 0;
  double final_accuracy = 0.0;
  double wall_seconds = 0.0;
  double training_seconds = 0.0;
  double samples_per_second = 0.0;
  double staleness_min = 0.0, staleness_mean = 0.0, staleness_max = 0.0;
  std::vector<std::uint64_t> gradients_per_worker;
  std::uint64_t final_version = 0;
  std::string weights_hash;
  MetricsWorkers workers;
};

// A metrics file read back; summary is empty for a run that failed or is still going.
struct MetricsLog {
  std::string path;
  MetricsRun run;
  std::vector<MetricsEval> evals;
  std::optional<MetricsSummary> summary;
  std::optional<std::string> failure;  // a "failed" line's error
  std::size_t cut_off_line = 0;  // the unfinished last line a crash left, skipped; 0: none
};

}  // namespace psgrad
