// How workers and the server take turns: one type from the config's text to the run's summary.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model/enum_names.hpp"

namespace psgrad {

// sync: every step sums one gradient per worker, all from the same weights (an iteration is a step);
// async: each gradient is applied as it arrives; ssp: async within a bound on how far workers drift.
enum class TrainingMode { sync, async, ssp };

// The config's spellings.
inline constexpr EnumName<TrainingMode> training_mode_names[] = {
    {TrainingMode::sync, "sync"}, {TrainingMode::async, "async"}, {TrainingMode::ssp, "ssp"}};

inline std::string mode_name(TrainingMode mode) { return name_in(training_mode_names, mode); }

// Nothing for anything but one of the spellings.
inline std::optional<TrainingMode> parse_training_mode(std::string_view text) {
  return value_in(training_mode_names, text);
}

}  // namespace psgrad
