// Whether a buffer holds only finite numbers: a trained model with NaN or infinity in it is useless,
// and saving or scoring one would hide that training diverged.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>

namespace psgrad {

// The exponent field of a float, 0x7f800000 exactly for NaN and infinity. The largest over a buffer
// is an integer maximum, which vectorizes without a chain of dependent adds.
inline std::uint32_t exponent_bits(float x) {
  std::uint32_t bits;
  std::memcpy(&bits, &x, sizeof bits);
  return bits & 0x7f800000u;
}
constexpr std::uint32_t non_finite_exponent = 0x7f800000u;

inline bool all_finite(const float* values, std::size_t size) {
  std::uint32_t largest = 0;
  for (std::size_t i = 0; i < size; ++i) largest = std::max(largest, exponent_bits(values[i]));
  return largest != non_finite_exponent;
}

// The index of the first NaN or infinity, if any; the clean case costs one fast pass.
inline std::optional<std::size_t> first_non_finite(const float* values, std::size_t size) {
  if (all_finite(values, size)) return std::nullopt;
  for (std::size_t i = 0; i < size; ++i)
    if (exponent_bits(values[i]) == non_finite_exponent) return i;
  return std::nullopt;
}

}  // namespace psgrad
