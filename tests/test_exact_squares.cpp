// Exact sums of squares: the same bits in any order and split, rounded once, NaN and infinity kept.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "model/exact_squares.hpp"
#include "model/random.hpp"

using namespace psgrad;

TEST_CASE("exact squares give the same bits in any order and however the values are split") {
  Random rng(4);
  std::vector<float> values(1000);
  // Magnitudes from 1e-30 to 1e10, so a running double sum would depend on the order.
  for (auto& x : values)
    x = static_cast<float>((rng.uniform() - 0.5) * std::pow(10.0, static_cast<double>(rng.below(41)) - 30.0));
  const double whole = ExactSquares(values.data(), values.size()).value();
  auto reversed = values;
  std::reverse(reversed.begin(), reversed.end());
  CHECK(ExactSquares(reversed.data(), reversed.size()).value() == whole);
  for (std::size_t parts : {2, 3, 7}) {
    CAPTURE(parts);
    ExactSquares total;
    std::vector<ExactSquares> split(parts);
    for (std::size_t i = 0; i < values.size(); ++i) split[i % parts].add(values.data() + i, 1);
    for (std::size_t p = parts; p-- > 0;) total.add(split[p]);
    CHECK(total == ExactSquares(values.data(), values.size()));
    CHECK(total.value() == whole);
  }
}

TEST_CASE("exact squares round once, to nearest, where a double running sum rounds at every step") {
  // 1 + 2^-54 + 2^-54 + 2^-80: exactly a hair above halfway between 1 and the next double, so the sum
  // rounds up; a running sum loses each small term to rounding and stays at 1.
  const std::vector<float> values = {1.0f, std::ldexp(1.0f, -27), std::ldexp(1.0f, -27), std::ldexp(1.0f, -40)};
  CHECK(ExactSquares(values.data(), values.size()).value() == 1.0 + std::ldexp(1.0, -52));
  double running = 0.0;
  for (const float x : values) running += static_cast<double>(x) * x;
  CHECK(running == 1.0);
  // Exactly halfway: ties go to the even neighbour, 1.
  CHECK(ExactSquares(values.data(), 3).value() == 1.0);
  // Small values keep every bit: the smallest subnormal's square is 2^-298.
  const float smallest = std::numeric_limits<float>::denorm_min();
  CHECK(ExactSquares(&smallest, 1).value() == std::ldexp(1.0, -298));
  const float largest = std::numeric_limits<float>::max();
  CHECK(ExactSquares(&largest, 1).value() == static_cast<double>(largest) * largest);
  CHECK(ExactSquares().value() == 0.0);
}

TEST_CASE("exact squares keep NaN and infinity, and cross messages as words") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> diverged = {1.0f, -inf};
  CHECK(std::isinf(ExactSquares(diverged.data(), diverged.size()).value()));
  ExactSquares with_nan(diverged.data(), diverged.size());
  const float nan = std::numeric_limits<float>::quiet_NaN();
  with_nan.add(&nan, 1);
  CHECK(std::isnan(with_nan.value()));

  const std::vector<float> values = {3.0f, 1e-20f, 5e30f};
  const ExactSquares sum(values.data(), values.size());
  std::vector<std::uint64_t> words;
  sum.append_words(words);
  REQUIRE(words.size() == ExactSquares::word_count);
  ExactSquares back;
  REQUIRE(ExactSquares::from_words(words.data(), words.size(), back));
  CHECK(back == sum);
  CHECK_FALSE(ExactSquares::from_words(words.data(), words.size() - 1, back));
  words.back() = 99;  // flags no sum can have
  CHECK_FALSE(ExactSquares::from_words(words.data(), words.size(), back));
}
