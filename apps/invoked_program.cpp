#include "apps/invoked_program.hpp"

#include <string_view>

#include "launch/shell_quote.hpp"

namespace psgrad {

namespace {

std::string& program() {
  static std::string name = "psgrad";
  return name;
}

}  // namespace

void set_invoked_program(const char* argv0) {
  // Without a slash the shell found it on PATH, where it is found again.
  if (!argv0 || std::string_view(argv0).find('/') == std::string_view::npos) return;
  program() = shell_quoted(argv0);
}

const std::string& invoked_program() { return program(); }

}  // namespace psgrad
