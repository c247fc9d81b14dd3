#include "model/sgd.hpp"

#include <algorithm>

#include "model/gradient_clip.hpp"
#include "model/finite.hpp"
#include "model/gradient_sum.hpp"

namespace psgrad {

Sgd::Sgd(const SgdSettings& settings, const ParameterLayout& layout)
    : settings_(settings), layout_(layout), steps_(layout.array_count(), 0) {}

void Sgd::apply_gradients(const float* source, float* weights, const float* const* all, std::size_t count) {
  if (source != weights) std::copy(source, source + layout_.total_size(), weights);
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
    float* w = weights + array.offset;
    const float* g = gradients + array.offset;
    ++steps_[a];
    // With coupled L2 the clip norm covers g + L2·w; computed on the fly to stay allocation-free.
    double sum_of_squares = 0.0;
    for (std::size_t i = 0; i < array.size(); ++i) {
      const double gi = coupled_l2 ? g[i] + l2 * w[i] : g[i];
      sum_of_squares += gi * gi;
    }
    const double norm = std::sqrt(sum_of_squares);
    const float scale =
        settings_.grad_clip > 0.0 && norm >= settings_.grad_clip ? static_cast<float>(settings_.grad_clip / norm) : 1.0f;
    for (std::size_t i = 0; i < array.size(); ++i) {
      const float gi = coupled_l2 ? g[i] + l2 * w[i] : g[i];
      w[i] -= lr * gi * scale;
    }
    if (settings_.L2 != 0.0 && settings_.L2_is_weight_decay)
      for (std::size_t i = 0; i < array.size(); ++i) w[i] -= lr * l2 * w[i];
  }
  // SGD's step is cheap, so one more pass over the weights costs little.
  finite_ = !first_non_finite(weights, layout_.total_size());
}

OptimizerState Sgd::state() const { return OptimizerState{{}, steps_}; }

bool Sgd::set_state(const OptimizerState& state) {
  if (!state.buffers.empty() || state.counts.size() != steps_.size()) return false;
  steps_ = state.counts;
  return true;
}

}  // namespace psgrad
