#include "model/sgd.hpp"

#include <algorithm>

#include "model/array_cuts.hpp"
#include "model/gradient_clip.hpp"
#include "model/finite.hpp"
#include "model/gradient_sum.hpp"

namespace psgrad {

Sgd::Sgd(const SgdSettings& settings, const ParameterLayout& layout)
    : settings_(settings), layout_(layout), steps_(layout.array_count(), 0), end_(layout.total_size()) {}

bool Sgd::restrict_to(std::size_t begin, std::size_t end) {
  if (begin >= end || end > layout_.total_size()) return false;
  // Coupled L2 puts the weights into the clip norm, and the weights of another shard are not here.
  const bool coupled_l2 = settings_.L2 != 0.0 && !settings_.L2_is_weight_decay;
  if (coupled_l2 && cuts_an_array(layout_, begin, end)) return false;
  begin_ = begin;
  end_ = end;
  return true;
}

// source and weights hold the owned floats [begin_, end_); the gradients are whole-layout buffers.
void Sgd::apply_gradients(const float* source, float* weights, const float* const* all, std::size_t count) {
  if (source != weights) std::copy(source, source + (end_ - begin_), weights);
  const float* gradients = all[0];
  if (count > 1) {
    summed_.resize(layout_.total_size());
    sum_gradients(summed_.data(), all, count, 0, summed_.size());
    gradients = summed_.data();
  }
  // Every array steps each time, so the first array's count is the optimizer's step.
  const auto lr = static_cast<float>(learn_rate_at(steps_.empty() ? 0 : steps_[0], settings_.learn_rate));
  const auto l2 = static_cast<float>(settings_.L2);
  const bool coupled_l2 = settings_.L2 != 0.0 && !settings_.L2_is_weight_decay;
  for (std::size_t a = 0; a < layout_.array_count(); ++a) {
    const auto& array = layout_[a];
    ++steps_[a];
    // This shard's part of the array, [first, last) in array positions; the norm covers all of it.
    const std::size_t first = std::max(array.offset, begin_) - array.offset;
    const std::size_t last = std::min(array.offset + array.size(), end_);
    if (array.offset + first >= last) continue;
    float* w = weights + (array.offset + first - begin_);  // from position `first` of the array
    const float* g = gradients + array.offset;
    // With coupled L2 the clip norm covers g + L2·w; computed on the fly to stay allocation-free.
    // (restrict_to made sure a shard with coupled L2 holds whole arrays: first is 0 then.)
    double sum_of_squares = 0.0;
    for (std::size_t i = 0; i < array.size(); ++i) {
      const double gi = coupled_l2 ? g[i] + l2 * w[i] : g[i];
      sum_of_squares += gi * gi;
    }
    const double norm = std::sqrt(sum_of_squares);
    const float scale =
        settings_.grad_clip > 0.0 && norm >= settings_.grad_clip ? static_cast<float>(settings_.grad_clip / norm) : 1.0f;
    const std::size_t owned = last - (array.offset + first);
    const float* g_owned = g + first;
    for (std::size_t i = 0; i < owned; ++i) {
      const float gi = coupled_l2 ? g_owned[i] + l2 * w[i] : g_owned[i];
      w[i] -= lr * gi * scale;
    }
    if (settings_.L2 != 0.0 && settings_.L2_is_weight_decay)
      for (std::size_t i = 0; i < owned; ++i) w[i] -= lr * l2 * w[i];
  }
  // SGD's step is cheap, so one more pass over the weights costs little.
  finite_ = !first_non_finite(weights, end_ - begin_);
}

OptimizerState Sgd::state() const { return OptimizerState{{}, steps_}; }

bool Sgd::set_state(const OptimizerState& state) {
  if (!state.buffers.empty() || state.counts.size() != steps_.size()) return false;
  steps_ = state.counts;
  return true;
}

}  // namespace psgrad
