#include "apps/run_setup.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "apps/job_from_config.hpp"
#include "apps/report_printer.hpp"
#include "apps/weights_file.hpp"

namespace psgrad {

Result<PreparedRun> prepare_run(const RunOptions& options) {
  auto overrides = options.overrides;
  if (!options.mode.empty()) overrides.push_back("cluster.mode=" + options.mode);
  if (options.workers != 0) overrides.push_back("cluster.num_workers=" + std::to_string(options.workers));
  auto config = load_config(options.config_path, overrides);
  if (!config) return Error{config.error()};
  const auto data_dir = options.data_dir.empty() ? default_data_dir() : options.data_dir;
  auto data = load_data_shared(config->data.name, config->data.path, data_dir);
  if (!data) return Error{data.error()};
  auto job = job_from_config(*config);
  return PreparedRun{std::move(config).value(), std::move(data).value(), std::move(job)};
}

void print_run_header(const PreparedRun& run) {
  fmt::print("Running {} parameter server training: {} workers, {} iterations, data {}\n",
             run.job.mode == TrainingMode::sync ? "synchronous" : "asynchronous", run.job.num_workers,
             run.job.iterations, run.data.description);
  std::fflush(stdout);
}

int finish_run(const Result<TrainingSummary>& summary, const PreparedRun& run, const RunOptions& options) {
  if (!summary) {
    fmt::print(stderr, "psgrad: training failed: {}\n", summary.error());
    return 1;
  }
  fmt::print("{}\n", summary_line(*summary, run.job.num_workers));
  fmt::print("final weights: version {}, hash {:016x}\n", summary->final_weights.version,
             weights_hash(summary->final_weights.values));
  std::fflush(stdout);
  if (!options.save_weights.empty()) {
    auto saved = write_weights_file(options.save_weights, summary->final_weights);
    if (!saved) {
      fmt::print(stderr, "psgrad: {}\n", saved.error());
      return 1;
    }
  }
  return 0;
}

}  // namespace psgrad
