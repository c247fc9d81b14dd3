// bfloat16: the top 16 bits of an IEEE float, rounded to nearest even; weights and gradients travel
// in it when cluster.wire = "bf16".
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace psgrad {

// Round to nearest, ties to even. Infinity stays infinity, a value beyond bf16's largest finite
// rounds to infinity (as IEEE rounding does), and NaN stays NaN with its sign and top payload bits
// (made quiet if only its low bits were set, which truncation would turn into infinity). Written
// without branches so that loops over arrays vectorize (the same result for every one of the 2^32
// floats as the branching form).
inline std::uint16_t to_bf16_bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  const std::uint32_t high = bits >> 16;
  const std::uint32_t quiet_nan = (high & 0x7fu) == 0 ? (high | 0x40u) : high;
  const std::uint32_t rounded = (bits + 0x7fffu + (high & 1u)) >> 16;
  return static_cast<std::uint16_t>((bits & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
}

inline float from_bf16_bits(std::uint16_t high) {
  const std::uint32_t bits = static_cast<std::uint32_t>(high) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// The float a value becomes after a trip through bf16.
inline float round_to_bf16(float value) { return from_bf16_bits(to_bf16_bits(value)); }

// `size` floats into their bf16 bits, and back.
inline void to_bf16_bits(const float* __restrict in, std::uint16_t* __restrict out, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) out[i] = to_bf16_bits(in[i]);
}

inline void from_bf16_bits(const std::uint16_t* __restrict in, float* __restrict out, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) out[i] = from_bf16_bits(in[i]);
}

// Rounds `size` floats from `in` into `out` (which may be `in`).
inline void round_to_bf16(const float* in, float* out, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) out[i] = round_to_bf16(in[i]);
}

}  // namespace psgrad
