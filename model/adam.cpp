#include "model/adam.hpp"

#include <algorithm>
#include <cmath>

#include "model/gradient_clip.hpp"
#include "model/gradient_sum.hpp"

namespace psgrad {

namespace {

// The moment updates and the step for one array; restrict-qualified so the loop vectorizes (with
// -fno-math-errno, sqrt is a vector instruction). In place, and from one buffer into another.
void adam_update(float* __restrict w, const float* __restrict g, float* __restrict m, float* __restrict v,
                 std::size_t size, float scale, float b1, float b2, float eps, float lr_t) {
  for (std::size_t i = 0; i < size; ++i) {
    const float gi = g[i] * scale;
    m[i] = b1 * m[i] + (1.0f - b1) * gi;
    v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
    w[i] -= lr_t * m[i] / (std::sqrt(v[i]) + eps);
  }
}

void adam_update(const float* __restrict source, float* __restrict target, const float* __restrict g,
                 float* __restrict m, float* __restrict v, std::size_t size, float scale, float b1, float b2,
                 float eps, float lr_t) {
  for (std::size_t i = 0; i < size; ++i) {
    const float gi = g[i] * scale;
    m[i] = b1 * m[i] + (1.0f - b1) * gi;
    v[i] = b2 * v[i] + (1.0f - b2) * gi * gi;
    target[i] = source[i] - lr_t * m[i] / (std::sqrt(v[i]) + eps);
  }
}

}  // namespace

Adam::Adam(const AdamSettings& settings, const ParameterLayout& layout)
    : settings_(settings),
      layout_(layout),
      first_moment_(layout.total_size(), 0.0f),
      second_moment_(layout.total_size(), 0.0f),
      averages_(settings.use_averages ? layout.total_size() : 0, 0.0f),
      summed_(layout.total_size(), 0.0f),
      steps_(layout.array_count(), 0) {}

void Adam::apply_gradients(const float* source, float* target, const float* const* gradients,
                           std::size_t count) {
  const auto b1 = static_cast<float>(settings_.beta1);
  const auto b2 = static_cast<float>(settings_.beta2);
  const auto eps = static_cast<float>(settings_.eps);
  // Coupled L2 joins the gradient before clipping, as in Thinc's Optimizer.__call__.
  const bool coupled_l2 = settings_.L2 != 0.0 && !settings_.L2_is_weight_decay;
  for (std::size_t a = 0; a < layout_.array_count(); ++a) {
    const auto& array = layout_[a];
    const std::size_t size = array.size();
    const float* w = source + array.offset;
    float* m = first_moment_.data() + array.offset;
    float* v = second_moment_.data() + array.offset;

    // One gradient is used where it lies; several are summed (with the clip norm) in one pass.
    const float* g = gradients[0] + array.offset;
    double squares = 0.0;
    if (count == 1 && !coupled_l2) {
      squares = settings_.grad_clip > 0.0 ? sum_of_squares(g, size) : 0.0;
    } else {
      float* summed = summed_.data() + array.offset;
      squares = sum_gradients(summed, gradients, count, array.offset, size, coupled_l2 ? w : nullptr,
                              static_cast<float>(settings_.L2));
      g = summed;
    }
    const float scale = clip_scale_from(squares, settings_.grad_clip);

    const auto t = static_cast<double>(++steps_[a]);
    const auto lr_t = static_cast<float>(settings_.learn_rate * std::sqrt(1.0 - std::pow(settings_.beta2, t)) /
                                         (1.0 - std::pow(settings_.beta1, t)));
    float* out = target + array.offset;
    if (out == w) adam_update(out, g, m, v, size, scale, b1, b2, eps, lr_t);
    else adam_update(w, out, g, m, v, size, scale, b1, b2, eps, lr_t);
    if (settings_.L2 != 0.0 && settings_.L2_is_weight_decay) {
      const auto decay = static_cast<float>(settings_.learn_rate * settings_.L2);
      for (std::size_t i = 0; i < size; ++i) out[i] -= decay * out[i];
    }
    if (settings_.use_averages) {
      const double decay = std::min((1.0 + t) / (10.0 + t), 0.9999);
      const auto keep = static_cast<float>(1.0 - decay);
      float* average = averages_.data() + array.offset;
      for (std::size_t i = 0; i < size; ++i) average[i] -= keep * (average[i] - out[i]);
    }
  }
}

OptimizerState Adam::state() const {
  OptimizerState state;
  state.buffers.reserve(first_moment_.size() * 2 + averages_.size());
  state.buffers.insert(state.buffers.end(), first_moment_.begin(), first_moment_.end());
  state.buffers.insert(state.buffers.end(), second_moment_.begin(), second_moment_.end());
  state.buffers.insert(state.buffers.end(), averages_.begin(), averages_.end());
  state.counts = steps_;
  return state;
}

bool Adam::set_state(const OptimizerState& state) {
  const std::size_t n = layout_.total_size();
  if (state.buffers.size() != 2 * n + averages_.size() || state.counts.size() != steps_.size())
    return false;
  std::copy(state.buffers.begin(), state.buffers.begin() + n, first_moment_.begin());
  std::copy(state.buffers.begin() + n, state.buffers.begin() + 2 * n, second_moment_.begin());
  std::copy(state.buffers.begin() + 2 * n, state.buffers.end(), averages_.begin());
  steps_ = state.counts;
  return true;
}

}  // namespace psgrad
