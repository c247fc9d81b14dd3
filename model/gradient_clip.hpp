// Thinc's clip_gradient: scale one parameter array's gradient by clip/norm when its Frobenius norm
// reaches clip (per array, not a global norm).
#pragma once

#include <cmath>
#include <cstddef>

namespace psgrad {

// Returns the factor the gradient must be multiplied by (1 when no clipping applies).
inline float clip_scale(const float* gradient, std::size_t size, double clip) {
  if (clip <= 0.0) return 1.0f;
  double sum_of_squares = 0.0;
  for (std::size_t i = 0; i < size; ++i)
    sum_of_squares += static_cast<double>(gradient[i]) * gradient[i];
  const double norm = std::sqrt(sum_of_squares);
  return norm >= clip ? static_cast<float>(clip / norm) : 1.0f;
}

}  // namespace psgrad
