#include "model/sgd.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model/array_cuts.hpp"
#include "model/finite.hpp"
#include "model/gradient_clip.hpp"
#include "model/gradient_sum.hpp"
#include "model/weight_averages.hpp"

namespace psgrad {

Sgd::Sgd(const SgdSettings& settings, const ParameterLayout& layout)
    : settings_(settings),
      layout_(layout),
      steps_(layout.array_count(), 0),
      averages_(settings.use_averages ? layout.total_size() : 0, 0.0f),
      end_(layout.total_size()),
      chunks_(norm_chunks(layout, 0, layout.total_size())),
      chunk_squares_(chunks_.size(), 0.0),
      scale_(layout.array_count(), 1.0f) {}

bool Sgd::restrict_to(std::size_t begin, std::size_t end) {
  const bool coupled_l2 = settings_.coupled_l2();
  if (!valid_shard_range(layout_, begin, end, coupled_l2)) return false;
  begin_ = begin;
  end_ = end;
  chunks_ = norm_chunks(layout_, begin, end);
  chunk_squares_.assign(chunks_.size(), 0.0);
  averages_.assign(settings_.use_averages ? end - begin : 0, 0.0f);
  return true;
}

// source, weights and the gradients hold the owned floats [begin_, end_); foreign_squares the sums of
// squares of the chunks not owned, of the gradients' sum.
void Sgd::step(const float* source, float* weights, const float* const* gradients, std::size_t count,
               const double* foreign_squares) {
  if (source != weights) std::copy(source, source + (end_ - begin_), weights);
  const auto lr = static_cast<float>(learn_rate_at(steps_.empty() ? 0 : steps_[0], settings_.learn_rate));
  const auto l2 = static_cast<float>(settings_.L2);
  // With coupled L2 the gradient (and its clip norm) is g + L2·w, as in Thinc's Optimizer.__call__.
  const bool coupled_l2 = settings_.coupled_l2();
  const bool gradient_as_is = count == 1 && !coupled_l2;
  if (!gradient_as_is) summed_.resize(end_ - begin_);
  const bool clipping = settings_.grad_clip > 0.0;
  for (std::size_t c = 0; c < chunks_.size(); ++c) {
    const auto& chunk = chunks_[c];
    if (!chunk.owned) {
      chunk_squares_[c] = clipping ? foreign_squares[chunk.foreign] : 0.0;
      continue;
    }
    const std::size_t at = chunk.begin - begin_;
    chunk_squares_[c] = gradient_as_is ? (clipping ? sum_of_squares(gradients[0] + at, chunk.size) : 0.0)
                                       : sum_gradients(summed_.data() + at, gradients, count, at, chunk.size,
                                                       coupled_l2 ? weights + at : nullptr, l2);
  }
  // Per array, its chunks' sums in chunk order. Every array steps each time, so the first array's
  // count is the optimizer's step.
  for (std::size_t a = 0, c = 0; a < layout_.array_count(); ++a) {
    double squares = 0.0;
    for (; c < chunks_.size() && chunks_[c].array == a; ++c) squares += chunk_squares_[c];
    scale_[a] = clip_scale_from(squares, settings_.grad_clip);
    ++steps_[a];
  }
  for (const auto& chunk : chunks_) {
    if (!chunk.owned) continue;
    const std::size_t at = chunk.begin - begin_;
    float* w = weights + at;
    const float* g = gradient_as_is ? gradients[0] + at : summed_.data() + at;
    const float scale = scale_[chunk.array];
    for (std::size_t i = 0; i < chunk.size; ++i) w[i] -= lr * g[i] * scale;
    if (settings_.decays_weights())
      for (std::size_t i = 0; i < chunk.size; ++i) w[i] -= lr * l2 * w[i];
    if (settings_.use_averages) update_averages(averages_.data() + at, w, chunk.size, steps_[chunk.array]);
  }
  // SGD's step is cheap, so one more pass over the weights costs little.
  finite_ = !first_non_finite(weights, end_ - begin_);
}

OptimizerState Sgd::state() const {
  return OptimizerState{std::vector<float>(averages_.begin(), averages_.end()), steps_};
}

std::optional<std::string> Sgd::state_problem(const OptimizerState& state) const {
  if (state.buffers.size() != averages_.size())
    return fmt::format("optimizer.buffers: {} floats, expected {} (SGD keeps no moments{})", state.buffers.size(),
                       averages_.size(), averages_.empty() ? "" : ", only the weight averages");
  if (const auto bad = first_non_finite(state.buffers.data(), state.buffers.size()))
    return fmt::format("optimizer.buffers: the average of weight {} is {}", *bad, state.buffers[*bad]);
  if (state.counts.size() != steps_.size())
    return fmt::format("optimizer.counts: {} step counts, expected one per parameter array ({})", state.counts.size(),
                       steps_.size());
  return std::nullopt;
}

bool Sgd::set_state(const OptimizerState& state) {
  if (state.buffers.size() != averages_.size() || state.counts.size() != steps_.size()) return false;
  std::copy(state.buffers.begin(), state.buffers.end(), averages_.begin());
  steps_ = state.counts;
  return true;
}

}  // namespace psgrad
