// Registers the output options on a run subcommand; they fill RunOptions' verbosity, metrics and save fields.
#include "apps/run_output_options.hpp"

namespace psgrad {

void add_run_output_options(CLI::App& command, RunOptions& options) {
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

}  // namespace psgrad
