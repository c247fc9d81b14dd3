// How a command ends on an error: one line on stderr, "<who>: <reason>", and the exit code for it.
#pragma once

#include <cstdio>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "io/user_text.hpp"

namespace psgrad {

// 2: psgrad refused what it was asked (an option, a file, a config, a model); 1: something failed once
// under way (a connection, a run). Scripts and tests tell the two apart.
inline constexpr int exit_refused = 2;
inline constexpr int exit_failed = 1;

class ErrorExit {
 public:
  // `who` opens every line ("psgrad work"); empty: the reason stands alone, as for `psgrad config check`,
  // whose reasons start with the file they are about.
  explicit ErrorExit(std::string who) : who_(std::move(who)) {}

  // Prints the reason; returns the exit code for it.
  int refused(const std::string& reason) const { return print(reason, exit_refused); }
  int failed(const std::string& reason) const { return print(reason, exit_failed); }

 private:
  int print(const std::string& reason, int code) const {
    const auto line = cut_long_words(reason);
    if (who_.empty())
      fmt::print(stderr, "{}\n", line);
    else
      fmt::print(stderr, "{}: {}\n", who_, line);
    return code;
  }

  std::string who_;
};

}  // namespace psgrad
