// The subcommands around training runs: eval, predict, plot and config.
#pragma once

#include <optional>

#include <CLI/CLI.hpp>

#include "apps/config_command.hpp"
#include "apps/eval_command.hpp"
#include "apps/plot_command.hpp"
#include "apps/predict_command.hpp"

namespace psgrad {

class ToolCommands {
 public:
  void add_to(CLI::App& app);
  // After parsing: the exit code of the tool subcommand that was given, if one was.
  std::optional<int> run_parsed() const;

 private:
  EvalOptions eval_;
  PredictOptions predict_;
  PlotOptions plot_;
  ConfigOptions config_;
  CLI::App* eval_command_ = nullptr;
  CLI::App* predict_command_ = nullptr;
  CLI::App* plot_command_ = nullptr;
  CLI::App* config_command_ = nullptr;
};

}  // namespace psgrad
