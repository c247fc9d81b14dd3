// Command-line checks that refuse a value in the words config errors use ("expected an integer >= 1,
// got 0"); CLI11's PositiveNumber says "not in range 0.000000 to 1.8e308".
#pragma once

#include <cmath>
#include <limits>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "io/user_text.hpp"

namespace psgrad {

// An integer of at least 1 (worker counts, shard indexes) that fits the option's int: checked before
// CLI11 converts it, whose own refusal of a value beyond int is a two-line "Could not convert".
inline CLI::Validator at_least_one() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        long long value = 0;
        if (!CLI::detail::lexical_cast(input, value) || value < 1) return "expected an integer >= 1, got " + echoed(input);
        if (value > std::numeric_limits<int>::max())
          return fmt::format("expected an integer from 1 to {}, got {}", std::numeric_limits<int>::max(),
                             echoed(input));
        return {};
      },
      "POSITIVE", "at least one");
}

// A finite number above 0 (scales).
inline CLI::Validator above_zero() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        double value = 0.0;
        if (!CLI::detail::lexical_cast(input, value) || !std::isfinite(value) || value <= 0.0)
          return "expected a number > 0, got " + echoed(input);
        return {};
      },
      "POSITIVE", "above zero");
}

// A whole number from minimum to maximum (row counts): said in the same words.
inline CLI::Validator whole_number_within(unsigned long long minimum, unsigned long long maximum) {
  return CLI::Validator(
      [minimum, maximum](std::string& input) -> std::string {
        unsigned long long value = 0;
        if (input.empty() || input[0] == '-' || !CLI::detail::lexical_cast(input, value) || value < minimum ||
            value > maximum)
          return fmt::format("expected a whole number from {} to {}, got {}", minimum, maximum, echoed(input));
        return {};
      },
      "COUNT", "whole number in range");
}

}  // namespace psgrad
