// Sums and products of counts (steps, examples, floats) that report a result too large for its type
// instead of wrapping around to a small one.
#pragma once

#include <cstdint>
#include <optional>

namespace psgrad {

// a x b, or nothing when it does not fit in 64 bits.
inline std::optional<std::uint64_t> checked_product(std::uint64_t a, std::uint64_t b) {
  std::uint64_t result = 0;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// a + b, or nothing when it does not fit in 64 bits.
inline std::optional<std::uint64_t> checked_sum(std::uint64_t a, std::uint64_t b) {
  std::uint64_t result = 0;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// a x b, or the largest 64-bit count when it does not fit: for totals that are only compared with.
inline std::uint64_t saturating_product(std::uint64_t a, std::uint64_t b) {
  return checked_product(a, b).value_or(UINT64_MAX);
}

}  // namespace psgrad
