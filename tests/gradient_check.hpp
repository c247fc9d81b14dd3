// Helpers for finite-difference gradient checks.
#pragma once

#include <cmath>
#include <functional>
#include <vector>

#include <doctest/doctest.h>

#include "model/random.hpp"

namespace psgrad::testing {

inline std::vector<float> random_values(std::size_t n, std::uint64_t seed, float scale = 1.0f) {
  Random rng(seed);
  std::vector<float> values(n);
  for (auto& x : values) x = static_cast<float>((2.0 * rng.uniform() - 1.0) * scale);
  return values;
}

// Compares analytic[i] with the central difference of loss() around parameter[i] for every i.
inline void check_gradient(std::vector<float>& parameter, const std::vector<float>& analytic,
                           const std::function<double()>& loss, double step = 1e-3) {
  REQUIRE(parameter.size() == analytic.size());
  int mismatches = 0;
  for (std::size_t i = 0; i < parameter.size(); ++i) {
    const float saved = parameter[i];
    parameter[i] = saved + static_cast<float>(step);
    const double plus = loss();
    parameter[i] = saved - static_cast<float>(step);
    const double minus = loss();
    parameter[i] = saved;
    const double numeric = (plus - minus) / (2 * step);
    const double tolerance = 2e-3 + 2e-2 * std::abs(numeric);
    if (std::abs(numeric - analytic[i]) > tolerance && ++mismatches <= 5)
      MESSAGE("index " << i << ": analytic " << analytic[i] << " numeric " << numeric);
  }
  CHECK(mismatches == 0);
}

}  // namespace psgrad::testing
