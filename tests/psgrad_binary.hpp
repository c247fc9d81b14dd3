// Runs the built psgrad binary as a user would, for behaviour only the whole command shows: what
// `config check` accepts, how a refused resume or a mistyped command ends.
#pragma once

#include <array>
#include <cstdio>
#include <string>

#include <sys/wait.h>

namespace psgrad::testing {

struct CommandRun {
  int exit_code = -1;  // -1: it did not exit normally
  std::string output;  // stdout and stderr together
};

// `arguments` is shell text after the binary's name; runs with the test's PSGRAD_DATA.
inline CommandRun run_psgrad(const std::string& arguments) {
  const std::string command = std::string(PSGRAD_BINARY_DIR) + "/apps/psgrad " + arguments + " 2>&1 </dev/null";
  CommandRun run;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::array<char, 4096> buffer{};
  while (const auto got = std::fread(buffer.data(), 1, buffer.size(), pipe)) run.output.append(buffer.data(), got);
  const int status = ::pclose(pipe);
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  return run;
}

// The number of lines of text (a last line without '\n' counts).
inline std::size_t line_count(const std::string& text) {
  std::size_t lines = 0;
  for (char c : text) lines += c == '\n';
  return lines + (!text.empty() && text.back() != '\n');
}

inline std::string config_path(const std::string& name) { return std::string(PSGRAD_SOURCE_DIR) + "/configs/" + name; }

}  // namespace psgrad::testing
