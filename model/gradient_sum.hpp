// Sums several workers' gradients for one parameter array and, in the same pass, the sum of squares
// its clip norm needs: one read of each gradient instead of a copy, an add per worker and a norm pass.
#pragma once

#include <algorithm>
#include <cstddef>

#include "model/gradient_clip.hpp"

namespace psgrad {

// out[i] = ((in[0][offset+i] + in[1][offset+i]) + ...) (+ l2 * w[i] when w is given: Thinc's coupled
// L2). Returns the sum of squares of out over the same eight fixed lanes as sum_of_squares, so the
// clip norm is bit-identical to computing it afterwards.
inline double sum_gradients(float* __restrict out, const float* const* in, std::size_t count, std::size_t offset,
                            std::size_t size, const float* __restrict w = nullptr, float l2 = 0.0f) {
  constexpr std::size_t block = 1024;  // a multiple of 8; small enough to stay in L1 between passes
  double lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (std::size_t start = 0; start < size; start += block) {
    const std::size_t n = std::min(block, size - start);
    float* __restrict o = out + start;
    const float* __restrict first = in[0] + offset + start;
    std::size_t k = 1;
    if (count >= 2) {
      // The first two in one pass: a copy and then an add would write and read `o` once more.
      const float* __restrict second = in[1] + offset + start;
      for (std::size_t i = 0; i < n; ++i) o[i] = first[i] + second[i];
      k = 2;
    } else {
      for (std::size_t i = 0; i < n; ++i) o[i] = first[i];
    }
    for (; k < count; ++k) {
      const float* __restrict g = in[k] + offset + start;
      for (std::size_t i = 0; i < n; ++i) o[i] += g[i];
    }
    if (w)
      for (std::size_t i = 0; i < n; ++i) o[i] += l2 * w[start + i];
    std::size_t i = 0;
    for (; i + 8 <= n; i += 8)
      for (std::size_t j = 0; j < 8; ++j) lanes[j] += static_cast<double>(o[i + j]) * o[i + j];
    for (std::size_t j = 0; i < n; ++i, ++j) lanes[j] += static_cast<double>(o[i]) * o[i];
  }
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// The clip factor from a sum of squares, as clip_scale computes it.
inline float clip_scale_from(double sum_of_squares, double clip) {
  if (clip <= 0.0) return 1.0f;
  const double norm = std::sqrt(sum_of_squares);
  return norm >= clip ? static_cast<float>(clip / norm) : 1.0f;
}

}  // namespace psgrad
