// Weight initializers with Thinc's definitions.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>

#include "model/random.hpp"

namespace psgrad {

// U(-s, s), s = sqrt(6 / (nO + nI)), drawn in double and stored as float (Thinc's glorot_uniform_init).
inline void glorot_uniform(float* w, std::size_t output_width, std::size_t input_width, Random& rng) {
  const double scale = std::sqrt(6.0 / static_cast<double>(output_width + input_width));
  for (std::size_t i = 0; i < output_width * input_width; ++i)
    w[i] = static_cast<float>((2.0 * rng.uniform() - 1.0) * scale);
}

// N(0, s), s = sqrt(2 / nI) (Thinc's he_normal_init), by Box-Muller on the generator's uniforms.
inline void he_normal(float* w, std::size_t output_width, std::size_t input_width, Random& rng) {
  const double scale = std::sqrt(2.0 / static_cast<double>(input_width));
  constexpr double two_pi = 6.283185307179586;
  for (std::size_t i = 0; i < output_width * input_width; ++i) {
    const double u = 1.0 - rng.uniform();  // in (0, 1]: log(u) is finite
    w[i] = static_cast<float>(std::sqrt(-2.0 * std::log(u)) * std::cos(two_pi * rng.uniform()) * scale);
  }
}

// A dense layer's initial W and b, as Thinc's layers default to; an activation takes on one of these
// as its `initialize`. The bias starts at zero in each.
struct GlorotUniformInit {
  static void initialize(float* w, float* b, std::size_t output_width, std::size_t input_width, Random& rng) {
    glorot_uniform(w, output_width, input_width, rng);
    std::fill(b, b + output_width, 0.0f);
  }
};

struct HeNormalInit {
  static void initialize(float* w, float* b, std::size_t output_width, std::size_t input_width, Random& rng) {
    he_normal(w, output_width, input_width, rng);
    std::fill(b, b + output_width, 0.0f);
  }
};

// Thinc's Sigmoid and Softmax: W zero too.
struct ZeroInit {
  static void initialize(float* w, float* b, std::size_t output_width, std::size_t input_width, Random&) {
    std::fill(w, w + output_width * input_width, 0.0f);
    std::fill(b, b + output_width, 0.0f);
  }
};

}  // namespace psgrad
