#include "model/sparse_adagrad.hpp"

#include <algorithm>
#include <cmath>

namespace psgrad {

SparseAdagrad::SparseAdagrad(const AdagradSettings& settings, std::size_t width)
    : settings_(settings), width_(width), accumulators_(width, static_cast<float>(settings.initial_accumulator)) {}

const float* SparseAdagrad::accumulator(std::size_t slot) const {
  return slot < stepped_.size() && stepped_[slot] ? accumulators_.row(slot) : nullptr;
}

void SparseAdagrad::grow(std::size_t slot) {
  accumulators_.grow_to(slot + 1);  // a block at a time, never moving
  if (slot < stepped_.size()) return;
  stepped_.resize(std::max(slot + 1, 2 * stepped_.size()), false);
}

std::uint64_t SparseAdagrad::read_row_state(std::size_t slot, float* out) const {
  if (const float* sum = accumulator(slot)) std::copy(sum, sum + width_, out);
  else std::fill(out, out + width_, static_cast<float>(settings_.initial_accumulator));
  return 0;
}

void SparseAdagrad::restore_row_state(std::size_t slot, const float* state, std::uint64_t) {
  grow(slot);
  std::copy(state, state + width_, accumulators_.row(slot));
  stepped_[slot] = true;
}

void SparseAdagrad::update_row(std::size_t slot, float* row, const float* gradient, float gradient_scale) {
  grow(slot);
  stepped_[slot] = true;
  const auto learn_rate = static_cast<float>(settings_.learn_rate);
  const auto eps = static_cast<float>(settings_.eps);
  float* sum = accumulators_.row(slot);
  for (std::size_t i = 0; i < width_; ++i) {
    const float g = gradient[i] * gradient_scale;
    sum[i] += g * g;
    row[i] -= learn_rate * g / (std::sqrt(sum[i]) + eps);
  }
}

}  // namespace psgrad
