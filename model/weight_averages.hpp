// Thinc's weight averages (Ops.update_averages): an exponential moving average from zero whose decay
// (1 + t) / (10 + t), capped at 0.9999, follows the array's update count t.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace psgrad {

inline void update_averages(float* average, const float* weights, std::size_t size, std::uint64_t t) {
  const auto steps = static_cast<double>(t);
  const double decay = std::min((1.0 + steps) / (10.0 + steps), 0.9999);
  const auto keep = static_cast<float>(1.0 - decay);
  for (std::size_t i = 0; i < size; ++i) average[i] -= keep * (average[i] - weights[i]);
}

}  // namespace psgrad
