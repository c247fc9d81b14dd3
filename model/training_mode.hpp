// How workers and the server take turns: one type from the config's text to the run's summary.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace psgrad {

// sync: every step sums one gradient per worker, all from the same weights (an iteration is a step);
// async: each gradient is applied as it arrives; ssp: async within a bound on how far workers drift.
enum class TrainingMode { sync, async, ssp };

inline std::string mode_name(TrainingMode mode) {
  switch (mode) {
    case TrainingMode::sync: return "sync";
    case TrainingMode::async: return "async";
    case TrainingMode::ssp: return "ssp";
  }
  return "sync";
}

// The config's spelling ("sync", "async", "ssp"); nothing for anything else.
inline std::optional<TrainingMode> parse_training_mode(std::string_view text) {
  for (auto mode : {TrainingMode::sync, TrainingMode::async, TrainingMode::ssp})
    if (text == mode_name(mode)) return mode;
  return std::nullopt;
}

}  // namespace psgrad
