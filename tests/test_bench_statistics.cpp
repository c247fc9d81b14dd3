// The bench's ratios: a paired ratio divides each run by the one measured beside it.
#include <doctest/doctest.h>

#include "bench/statistics.hpp"

using psgrad::bench::paired_ratio;
using psgrad::bench::ratio;
using psgrad::bench::summarize;

TEST_CASE("a paired ratio divides each run by the run beside it, so a slow spell cancels") {
  // Both series slowed by half in the second pair: each pair's ratio is 2.
  const auto numerator = summarize({200.0, 100.0, 210.0});
  const auto denominator = summarize({100.0, 50.0, 105.0});
  const auto paired = paired_ratio(numerator, denominator);
  CHECK(paired.median == doctest::Approx(2.0));
  CHECK(paired.min == doctest::Approx(2.0));
  CHECK(paired.max == doctest::Approx(2.0));
  // The ratio of medians spreads over every pairing: 100 / 105 to 210 / 50.
  const auto unpaired = ratio(numerator, denominator);
  CHECK(unpaired.min == doctest::Approx(100.0 / 105.0));
  CHECK(unpaired.max == doctest::Approx(210.0 / 50.0));
}

TEST_CASE("a paired ratio keeps the samples in the order they were taken") {
  // Sorted, the first numerator would meet the other denominator: 3 / 1 and 1 / 3 instead of 1 and 1.
  const auto paired = paired_ratio(summarize({3.0, 1.0}), summarize({3.0, 1.0}));
  CHECK(paired.min == doctest::Approx(1.0));
  CHECK(paired.max == doctest::Approx(1.0));
}

TEST_CASE("series of different lengths fall back to the ratio of medians") {
  const auto paired = paired_ratio(summarize({4.0, 6.0, 8.0}), summarize({2.0, 4.0}));
  CHECK(paired.median == doctest::Approx(6.0 / 3.0));
  CHECK(paired.min == doctest::Approx(4.0 / 4.0));
}
