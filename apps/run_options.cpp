// Registers the run options on a subcommand; they fill RunOptions.
#include "apps/run_options.hpp"

#include "apps/cli_checks.hpp"

namespace psgrad {

namespace {

// --quiet, --verbose, --metrics, --no-metrics, --save: what a run prints and writes.
void add_output_options(CLI::App& command, RunOptions& options) {
  command.add_option("--save", options.save_model, "write the final model to this file (for eval and predict)");
  auto* quiet = command.add_flag_callback(
      "--quiet", [&options] { options.verbosity = Verbosity::quiet; }, "print only the final accuracy line and errors");
  command
      .add_flag_callback("--verbose", [&options] { options.verbosity = Verbosity::verbose; },
                         "also print dev loss and train loss per evaluation, on stderr")
      ->excludes(quiet);
  auto* metrics = command.add_option_function<std::string>(
      "--metrics", [&options](const std::string& path) { options.metrics_path = path; },
      "metrics file, JSON lines (default runs/<UTC time>-<mode>.jsonl; '' writes none)");
  command
      .add_flag_callback("--no-metrics", [&options] { options.metrics_path = std::string(); }, "write no metrics file")
      ->excludes(metrics);
}

}  // namespace

void add_run_options(CLI::App& command, RunOptions& options) {
  command.add_option("--config", options.config_path,
                     "config file: TOML, or Thinc's format (.cfg, .ini); with --resume, the checkpoint's own run is "
                     "the default");
  command.add_option("--mode", options.mode, "sync, async or ssp (overrides cluster.mode)")
      ->check(CLI::IsMember({"sync", "async", "ssp"}));
  command.add_option("--workers", options.workers, "number of workers (overrides cluster.num_workers)")
      ->check(at_least_one());
  command.add_option("--set", options.overrides, "override a config value: section.key=value (repeatable)")
      ->allow_extra_args(false);
  command.add_option("--data-dir", options.data_dir, "data folder (default $PSGRAD_DATA, else ./data)");
  command.add_option("--save-weights", options.save_weights, "write the final weights to this file");
  command.add_option("--trace", options.trace_path,
                     "write a Chrome trace of the run to this JSON file (chrome://tracing, ui.perfetto.dev): "
                     "each worker's compute, wait and transfers, shard applies, evaluations");
  command.add_option("--tensorboard", options.tensorboard_dir,
                     "write TensorBoard event files into this folder: dev accuracy and loss, train loss, "
                     "samples/s and staleness per evaluation (tensorboard --logdir FOLDER)");
  add_output_options(command, options);
}

}  // namespace psgrad
