// Whether a buffer holds only finite numbers: a trained model with NaN or infinity in it is useless,
// and saving or scoring one would hide that training diverged.
#pragma once

#include <cstddef>
#include <optional>

namespace psgrad {

// The index of the first NaN or infinity, if any. x * 0 is NaN exactly for those, and the sum of
// such products vectorizes, so the clean case costs one fast pass.
inline std::optional<std::size_t> first_non_finite(const float* values, std::size_t size) {
  float probe = 0.0f;
  for (std::size_t i = 0; i < size; ++i) probe += values[i] * 0.0f;
  if (probe == 0.0f) return std::nullopt;
  for (std::size_t i = 0; i < size; ++i)
    if (!(values[i] * 0.0f == 0.0f)) return i;
  return std::nullopt;
}

}  // namespace psgrad
