// The hidden model: logit = bias + sum over fields of a random weight per (field, id bucket) + a weight
// per count field times its standardised log count. Ranks are drawn from a truncated power law and
// scrambled to 32-bit ids by a bijection, so popular ids are spread over the key space.
#include "io/click_log_generator.hpp"

#include <algorithm>
#include <cmath>

namespace psgrad {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSqrt3 = 1.7320508075688772;
// Ids share a weight per bucket of the top 16 bits: popular ids get buckets of their own in effect,
// the long tail shares them.
constexpr int kBucketShift = 16;

std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A bijection of 32-bit words (Wellons' lowbias32): distinct ranks stay distinct ids.
std::uint32_t scramble(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

// A standard normal from two 64-bit words (Box-Muller).
double normal_from(std::uint64_t a, std::uint64_t b) {
  const double u = 1.0 - unit(a);  // (0, 1]: log stays finite
  return std::sqrt(-2.0 * std::log(u)) * std::cos(2.0 * kPi * unit(b));
}

double normal(Random& random) { return normal_from(random.next(), random.next()); }

double between(Random& random, double low, double high) { return low + (high - low) * random.uniform(); }

}  // namespace

ClickLogGenerator::ClickLogGenerator(std::uint64_t truth_seed, std::uint64_t row_seed)
    : truth_seed_(truth_seed), random_(mix64(row_seed) ^ 0x636c69636b6c6f67ull) {
  Random truth(truth_seed);
  for (auto& field : count_fields_) {
    field.log_mean = between(truth, 0.5, 4.0);
    field.log_spread = between(truth, 0.5, 1.5);
    field.weight = 0.25 * normal(truth);
  }
  for (auto& field : categorical_fields_) {
    // From a handful of values to millions, as Criteo's fields range.
    field.cardinality = std::round(std::exp(between(truth, std::log(4.0), std::log(16777216.0))));
    const double exponent = between(truth, 1.05, 1.4);
    field.top_less_one = std::pow(field.cardinality + 1.0, 1.0 - exponent) - 1.0;
    field.inverse_power = 1.0 / (1.0 - exponent);
    field.salt = static_cast<std::uint32_t>(truth.next());
    field.weight_scale = 0.34 * between(truth, 0.25, 1.75);
  }
  // About a quarter of the rows are clicks, as in Criteo's logs.
  bias_ = -2.0;
}

double ClickLogGenerator::id_weight(std::size_t field, std::uint32_t id) const {
  const std::uint64_t key = mix64(truth_seed_ ^ (static_cast<std::uint64_t>(field) << 40) ^ (id >> kBucketShift));
  // Uniform with the field's spread: cheaper than a normal, and as good a weight.
  return categorical_fields_[field].weight_scale * kSqrt3 * (2.0 * unit(key) - 1.0);
}

void ClickLogGenerator::next(ClickRow& row) {
  double logit = bias_;
  for (std::size_t j = 0; j < kClickCountFields; ++j) {
    const auto& field = count_fields_[j];
    const double z = normal(random_);
    // Log-normal, less one and floored: counts from 0, with a long tail.
    const double count = std::floor(std::exp(field.log_mean + field.log_spread * z) - 1.0);
    row.counts[j] = count > 0 ? static_cast<std::uint64_t>(count) : 0;
    const double standardised = (std::log1p(static_cast<double>(row.counts[j])) - field.log_mean) / field.log_spread;
    logit += field.weight * standardised;
  }
  for (std::size_t f = 0; f < kClickCategoricalFields; ++f) {
    const auto& field = categorical_fields_[f];
    // Inverse CDF of a power law on [1, n + 1): rank r has probability about r^-s.
    const double x = std::pow(field.top_less_one * random_.uniform() + 1.0, field.inverse_power);
    const auto rank = static_cast<std::uint32_t>(std::min(std::floor(x), field.cardinality));
    row.ids[f] = scramble(rank ^ field.salt);
    logit += id_weight(f, row.ids[f]);
  }
  row.logit = logit;
  row.clicked = random_.uniform() < 1.0 / (1.0 + std::exp(-logit));
}

}  // namespace psgrad
