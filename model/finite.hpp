// Whether a buffer holds only finite numbers: a trained model with NaN or infinity in it is useless,
// and saving or scoring one would hide that training diverged.
#pragma once

#include <cstddef>
#include <optional>

#include "model/gradient_clip.hpp"

namespace psgrad {

// 0 when every value is finite, NaN otherwise: x * 0 is NaN exactly for NaN and infinity.
inline float finite_probe(const float* values, std::size_t size) {
  return eight_lane_sum<float>(values, size, [](float x) { return x * 0.0f; });
}

// The index of the first NaN or infinity, if any. x * 0 is NaN exactly for those, and the sum of
// such products vectorizes, so the clean case costs one fast pass.
inline std::optional<std::size_t> first_non_finite(const float* values, std::size_t size) {
  if (finite_probe(values, size) == 0.0f) return std::nullopt;
  for (std::size_t i = 0; i < size; ++i)
    if (!(values[i] * 0.0f == 0.0f)) return i;
  return std::nullopt;
}

}  // namespace psgrad
