// The psgrad command line: each subcommand adds itself from its own file; main runs the one given.
#include <csignal>
#include <cstdio>
#include <iostream>
#include <vector>

#include <CLI/CLI.hpp>

#include "apps/config_command.hpp"
#include "apps/data_command.hpp"
#include "apps/eval_command.hpp"
#include "apps/launch_command.hpp"
#include "apps/plot_command.hpp"
#include "apps/predict_command.hpp"
#include "apps/serve_command.hpp"
#include "apps/shard_command.hpp"
#include "apps/train_command.hpp"
#include "apps/usage_error.hpp"
#include "apps/version_text.hpp"
#include "apps/work_command.hpp"
#include "apps/error_exit.hpp"
#include "apps/invoked_program.hpp"

int main(int argc, char** argv) {
  // A reader that goes away (`psgrad train | head -2`) must not end a run unsaved: writes then fail
  // with EPIPE, and each writer decides what that means.
  std::signal(SIGPIPE, SIG_IGN);
  psgrad::set_invoked_program(argc > 0 ? argv[0] : nullptr);
  CLI::App app{"psgrad: data-parallel neural-network training with a parameter server", "psgrad"};
  app.require_subcommand(1);
  app.set_version_flag("--version", psgrad::version_text(), "print the version, commit, library versions and "
                                                            "vector instructions, then exit");
  // In the order `psgrad --help` lists them.
  const std::vector<psgrad::Command> commands = {
      psgrad::add_train_command(app), psgrad::add_serve_command(app),   psgrad::add_shard_command(app),
      psgrad::add_work_command(app),  psgrad::add_launch_command(app),  psgrad::add_data_command(app),    psgrad::add_eval_command(app),
      psgrad::add_predict_command(app), psgrad::add_plot_command(app), psgrad::add_config_command(app),
  };
  // `psgrad` alone is a request for help, not a mistake; so is a group of commands alone (`psgrad
  // config`), which prints its own help: one rule, exit 0.
  if (argc <= 1) {
    std::cout << app.help();
    return 0;
  }
  if (argc == 2)
    for (const auto& command : commands)
      if (command.cli->get_name() == argv[1] && command.cli->get_require_subcommand_min() > 0) {
        std::cout << command.cli->help();
        return 0;
      }
  // CLI11 would take a mistyped command for a missing one ("A subcommand is required").
  std::vector<std::string> names;
  for (const auto& command : commands) names.push_back(command.cli->get_name());
  if (const auto unknown = psgrad::unknown_command(argv[1], names); !unknown.empty()) {
    std::fprintf(stderr, "psgrad: %s\n", unknown.c_str());
    return psgrad::exit_refused;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    if (error.get_exit_code() == 0) return app.exit(error);  // --help, --version
    return psgrad::usage_error(error);
  }
  for (const auto& command : commands)
    if (command.cli->parsed()) {
      const int code = command.run();
      return command.output_is_product ? psgrad::check_standard_output(command.cli->get_name(), code) : code;
    }
  return 2;
}
