#include "model/lazy_adam.hpp"

#include <algorithm>
#include <cmath>

namespace psgrad {

LazyAdam::LazyAdam(const LazyAdamSettings& settings, std::size_t width)
    : settings_(settings), width_(width), first_moment_(width), second_moment_(width) {}

const float* LazyAdam::first_moment(std::size_t slot) const {
  return row_steps(slot) > 0 ? first_moment_.row(slot) : nullptr;
}

const float* LazyAdam::second_moment(std::size_t slot) const {
  return row_steps(slot) > 0 ? second_moment_.row(slot) : nullptr;
}

void LazyAdam::grow(std::size_t slot) {
  // The moments grow a block at a time without moving; doubling keeps the counts' growth amortised.
  first_moment_.grow_to(slot + 1);
  second_moment_.grow_to(slot + 1);
  if (slot < steps_.size()) return;
  steps_.resize(std::max(slot + 1, 2 * steps_.size()), 0);
}

std::uint64_t LazyAdam::read_row_state(std::size_t slot, float* out) const {
  if (row_steps(slot) == 0) {
    std::fill(out, out + 2 * width_, 0.0f);
    return 0;
  }
  std::copy(first_moment(slot), first_moment(slot) + width_, out);
  std::copy(second_moment(slot), second_moment(slot) + width_, out + width_);
  return steps_[slot];
}

void LazyAdam::restore_row_state(std::size_t slot, const float* state, std::uint64_t steps) {
  grow(slot);
  std::copy(state, state + width_, first_moment_.row(slot));
  std::copy(state + width_, state + 2 * width_, second_moment_.row(slot));
  steps_[slot] = steps;
}

float LazyAdam::step_rate(std::uint64_t t) {
  // Thinc folds the bias correction into the learning rate and adds eps to the uncorrected sqrt(v).
  auto rate = [this](std::uint64_t count) {
    const auto steps = static_cast<double>(count);
    return static_cast<float>(settings_.learn_rate * std::sqrt(1.0 - std::pow(settings_.beta2, steps)) /
                              (1.0 - std::pow(settings_.beta1, steps)));
  };
  if (t > kKeptRates) return rate(t);
  while (rates_.size() < t) rates_.push_back(rate(rates_.size() + 1));
  return rates_[t - 1];
}

void LazyAdam::prefetch_row(std::size_t slot) const {
  if (slot >= first_moment_.size()) return;  // a new slot's state is made by its update
  const float* first = first_moment_.row(slot);
  const float* second = second_moment_.row(slot);
  constexpr std::size_t kLineFloats = 64 / sizeof(float);
  for (std::size_t i = 0; i < width_; i += kLineFloats) {
    __builtin_prefetch(first + i, 1);
    __builtin_prefetch(second + i, 1);
  }
  __builtin_prefetch(steps_.data() + slot, 1);
}

void LazyAdam::update_row(std::size_t slot, float* row, const float* gradient, float gradient_scale) {
  grow(slot);
  const float learn_rate = step_rate(++steps_[slot]);
  const auto b1 = static_cast<float>(settings_.beta1);
  const auto b2 = static_cast<float>(settings_.beta2);
  const auto eps = static_cast<float>(settings_.eps);
  const auto decay = static_cast<float>(settings_.learn_rate * settings_.L2);
  float* m = first_moment_.row(slot);
  float* v = second_moment_.row(slot);
  for (std::size_t i = 0; i < width_; ++i) {
    const float g = gradient[i] * gradient_scale;
    m[i] = b1 * m[i] + (1.0f - b1) * g;
    v[i] = b2 * v[i] + (1.0f - b2) * g * g;
    float x = row[i] - learn_rate * m[i] / (std::sqrt(v[i]) + eps);
    if (settings_.L2 != 0.0) x -= decay * x;
    row[i] = x;
  }
}

}  // namespace psgrad
