// Thinc's clip_gradient: scale one parameter array's gradient by clip/norm when its Frobenius norm
// reaches clip (per array, not a global norm).
#pragma once

#include <cmath>
#include <cstddef>

namespace psgrad {

// The sum of term(x) over eight fixed lanes: the compiler can vectorize it (a single running sum it
// may not reorder), and the order stays the same on every run.
template <class Sum, class Term>
inline Sum eight_lane_sum(const float* __restrict values, std::size_t size, Term term) {
  Sum lanes[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8)
    for (std::size_t j = 0; j < 8; ++j) lanes[j] += term(values[i + j]);
  for (std::size_t j = 0; i < size; ++i, ++j) lanes[j] += term(values[i]);
  return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

// The sum of squares in double, for clip norms.
inline double sum_of_squares(const float* values, std::size_t size) {
  return eight_lane_sum<double>(values, size, [](float x) { return static_cast<double>(x) * x; });
}

// Returns the factor the gradient must be multiplied by (1 when no clipping applies).
inline float clip_scale(const float* gradient, std::size_t size, double clip) {
  if (clip <= 0.0) return 1.0f;
  const double norm = std::sqrt(sum_of_squares(gradient, size));
  return norm >= clip ? static_cast<float>(clip / norm) : 1.0f;
}

}  // namespace psgrad
