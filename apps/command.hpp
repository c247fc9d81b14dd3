// One psgrad subcommand as main() sees it: its CLI11 subcommand and what to run when it was given.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace psgrad {

// Each command file has one `Command add_<name>_command(CLI::App& app)` that adds the subcommand with
// its options (held by `run`, so they outlive parsing) and returns it.
struct Command {
  CLI::App* cli = nullptr;
  std::function<int()> run;  // returns the process exit code
  // What it prints on standard output is what it makes (predict, eval, config): a write that failed
  // fails the command. A run's lines are progress only: it trains on and saves when its reader is gone.
  bool output_is_product = false;
};

// Flushes standard output; when that or any earlier write to it failed, says so in one line and turns
// a successful exit code into 1.
inline int check_standard_output(const std::string& command, int code) {
  // A write that failed earlier left its reason in errno (a call that succeeds leaves errno as it was);
  // the flush's own failure, if any, is the newer one. Best effort: the line is what matters.
  const int earlier = errno;
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int reason = flushed ? earlier : errno;
  if (flushed && !std::ferror(stdout)) return code;
  std::fprintf(stderr, "psgrad %s: standard output: %s\n", command.c_str(),
               reason != 0 ? std::strerror(reason) : "a write failed");
  return code == 0 ? 1 : code;
}

// A subcommand that only groups others (`psgrad config show`): one of them must be given.
inline CLI::App* add_command_group(CLI::App& app, const std::string& name, const std::string& description) {
  auto* group = app.add_subcommand(name, description);
  group->require_subcommand(1);
  return group;
}

}  // namespace psgrad
