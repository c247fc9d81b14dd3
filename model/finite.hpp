// Whether a buffer holds only finite numbers: a trained model with NaN or infinity in it is useless,
// and saving or scoring one would hide that training diverged.
#pragma once

#include <cstddef>
#include <optional>

namespace psgrad {

// 0 when every value is finite, NaN otherwise: x * 0 is NaN exactly for NaN and infinity. Eight
// independent lanes, so the loop vectorizes (a single running sum may not be reordered).
inline float finite_probe(const float* __restrict values, std::size_t size) {
  float lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8)
    for (std::size_t j = 0; j < 8; ++j) lanes[j] += values[i + j] * 0.0f;
  for (; i < size; ++i) lanes[0] += values[i] * 0.0f;
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
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
