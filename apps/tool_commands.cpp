// Registers the tool subcommands and runs whichever was parsed.
#include "apps/tool_commands.hpp"

namespace psgrad {

void ToolCommands::add_to(CLI::App& app) {
  eval_command_ = add_eval_command(app, eval_);
  predict_command_ = add_predict_command(app, predict_);
  plot_command_ = add_plot_command(app, plot_);
  config_command_ = add_config_command(app, config_);
}

std::optional<int> ToolCommands::run_parsed() const {
  if (eval_command_ && eval_command_->parsed()) return run_eval_command(eval_);
  if (predict_command_ && predict_command_->parsed()) return run_predict_command(predict_);
  if (plot_command_ && plot_command_->parsed()) return run_plot_command(plot_);
  if (config_command_ && config_command_->parsed()) return run_config_command(config_);
  return std::nullopt;
}

}  // namespace psgrad
