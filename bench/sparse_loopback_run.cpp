#include "bench/sparse_loopback_run.hpp"

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "bench/captured_run.hpp"
#include "bench/multiprocess_runs.hpp"
#include "io/click_log_generator.hpp"
#include "io/config.hpp"

namespace psgrad::bench {

SparseLoopbackRun::SparseLoopbackRun(std::string psgrad_path, const TrainingJob& job, ClickRows train, ClickRows dev)
    : psgrad_path_(std::move(psgrad_path)) {
  Config config;
  static_cast<TrainingJob&>(config) = job;
  config.data.path = folder_.path() + "/train.jsonl";
  config.data.dev_path = folder_.path() + "/dev.jsonl";
  config.data.label = "label";
  for (std::size_t f = 0; f < kClickCategoricalFields; ++f)
    config.data.columns.push_back(DataColumn{fmt::format("C{}", f + 1), ColumnKind::ids, std::nullopt});
  write_click_file(config.data.path, train.rows, train.seed);
  write_click_file(config.data.dev_path, dev.rows, dev.seed);
  config_path_ = folder_.path() + "/run.toml";
  std::ofstream out(config_path_);
  out << render_config(config);
  if (!out.flush()) throw std::runtime_error(config_path_ + ": could not be written");
}

double SparseLoopbackRun::run(std::uint64_t iterations, bool processes) const {
  std::vector<std::string> argv = {psgrad_path_, "train", "--config", config_path_, "--set",
                                   fmt::format("training.iterations={}", iterations)};
  if (processes) argv.push_back("--processes");
  const auto run = run_captured(argv, std::chrono::seconds(300));
  const double rate = parse_samples_per_second(run.output);
  if (run.exit_code != 0 || rate < 0.0 || run.leftover_processes > 0)
    throw std::runtime_error(fmt::format(
        "`{} train --config {}{}` failed (exit {}, signal {}{}, {} process(es) left running):\n{}",
        psgrad_path_, config_path_, processes ? " --processes" : "", run.exit_code, run.signal,
        run.timed_out ? ", timed out" : "", run.leftover_processes, run.output));
  return rate;
}

}  // namespace psgrad::bench
