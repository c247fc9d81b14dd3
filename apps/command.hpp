// One psgrad subcommand as main() sees it: its CLI11 subcommand and what to run when it was given.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace psgrad {

// Each command file has one `Command add_<name>_command(CLI::App& app)` that adds the subcommand with
// its options (held by `run`, so they outlive parsing) and returns it.
struct Command {
  CLI::App* cli = nullptr;
  std::function<int()> run;  // returns the process exit code
};

// A subcommand that only groups others (`psgrad config show`): one of them must be given.
inline CLI::App* add_command_group(CLI::App& app, const std::string& name, const std::string& description) {
  auto* group = app.add_subcommand(name, description);
  group->require_subcommand(1);
  return group;
}

}  // namespace psgrad
