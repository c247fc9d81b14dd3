// How a mistake on the command line ends: one line on stderr, exit code 2 (exit_refused), whatever
// CLI11's own code for it.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace psgrad {

// "unknown command "trian" (did you mean train?) ..." when `word` stands where a command belongs and
// names none of `commands`; empty when it names one or is an option.
std::string unknown_command(const std::string& word, const std::vector<std::string>& commands);

// Prints CLI11's complaint as one line (without its "Run with --help" line), echoed values cut to
// about 200 characters; returns 2.
int usage_error(const CLI::ParseError& error);

}  // namespace psgrad
