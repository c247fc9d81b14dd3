#include "model/adam.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include <fmt/format.h>

#include "model/array_cuts.hpp"
#include "model/finite.hpp"
#include "model/gradient_clip.hpp"
#include "model/gradient_sum.hpp"
#include "model/weight_averages.hpp"

namespace psgrad {

namespace {

// A moment that decayed below the smallest normal float is zero from then on. Its part of any step
// is below 1e-30 of the weight it moves, and on some CPUs every subnormal operand costs a microcode
// assist: measured on an Intel Xeon, Adam's pass took 11x as long once the first moments of rarely
// active inputs had decayed that far (beta1 0.9 takes a moment of 1e-7 there in about 680 steps).
inline float without_subnormal(float moment) { return std::fabs(moment) < FLT_MIN ? 0.0f : moment; }

// One weight's moment updates, step and (Decay) decoupled weight decay, with the arithmetic of a
// separate decay pass after the step.
template <bool Decay>
inline float adam_weight(float w, float g, float& m, float& v, float b1, float b2, float eps, float lr_t,
                         float decay) {
  m = without_subnormal(b1 * m + (1.0f - b1) * g);
  v = without_subnormal(b2 * v + (1.0f - b2) * g * g);
  float x = w - lr_t * m / (std::sqrt(v) + eps);
  if (Decay) x -= decay * x;
  return x;
}

// One chunk's step in one pass that also returns the new weights' largest exponent field
// (non_finite_exponent when one is NaN or infinite). Restrict-qualified so the loop vectorizes (with
// -fno-math-errno, sqrt is a vector instruction); so that no two pointers name the same floats, a step
// in place reads the old weights from target and leaves source unread.
template <bool Decay, bool InPlace>
std::uint32_t adam_update(const float* __restrict source, float* __restrict target, const float* __restrict g,
                          float* __restrict m, float* __restrict v, std::size_t size, float scale, float b1,
                          float b2, float eps, float lr_t, float decay) {
  std::uint32_t exponents = 0;
  for (std::size_t i = 0; i < size; ++i) {
    const float w = InPlace ? target[i] : source[i];
    const float x = adam_weight<Decay>(w, g[i] * scale, m[i], v[i], b1, b2, eps, lr_t, decay);
    target[i] = x;
    exponents = std::max(exponents, exponent_bits(x));
  }
  return exponents;
}

// RAdam's early steps: the moments move as Adam's, the weight by momentum alone.
template <bool Decay, bool InPlace>
std::uint32_t momentum_update(const float* __restrict source, float* __restrict target, const float* __restrict g,
                              float* __restrict m, float* __restrict v, std::size_t size, float scale, float b1,
                              float b2, float lr_t, float decay) {
  std::uint32_t exponents = 0;
  for (std::size_t i = 0; i < size; ++i) {
    const float w = InPlace ? target[i] : source[i];
    const float gradient = g[i] * scale;
    m[i] = without_subnormal(b1 * m[i] + (1.0f - b1) * gradient);
    v[i] = without_subnormal(b2 * v[i] + (1.0f - b2) * gradient * gradient);
    float x = w - lr_t * m[i];
    if (Decay) x -= decay * x;
    target[i] = x;
    exponents = std::max(exponents, exponent_bits(x));
  }
  return exponents;
}

// RAdam's step size at step t, as Thinc's _radam computes it; momentum_only when the rectification's
// length of the simple moving average is below 5.
double rectified_step_size(double beta1, double beta2, double t, bool& momentum_only) {
  const double beta2_t = std::pow(beta2, t);
  const double max_length = 2.0 / (1.0 - beta2) - 1.0;
  const double length = max_length - 2.0 * t * beta2_t / (1.0 - beta2_t);
  momentum_only = length < 5.0;
  if (momentum_only) return 1.0 / (1.0 - std::pow(beta1, t));
  return std::sqrt((1.0 - beta2_t) * (length - 4.0) / (max_length - 4.0) * (length - 2.0) / length * max_length /
                   (max_length - 2.0)) /
         (1.0 - std::pow(beta1, t));
}

}  // namespace

Adam::Adam(const AdamSettings& settings, const ParameterLayout& layout)
    : settings_(settings),
      layout_(layout),
      first_moment_(layout.total_size(), 0.0f),
      second_moment_(layout.total_size(), 0.0f),
      averages_(settings.use_averages ? layout.total_size() : 0, 0.0f),
      summed_(layout.total_size(), 0.0f),
      steps_(layout.array_count(), 0),
      scale_(layout.array_count(), 1.0f),
      learn_rate_(layout.array_count(), 0.0f),
      momentum_only_(layout.array_count(), 0) {
  end_ = layout.total_size();
  make_chunks();
}

// Every chunk of every array with floats in [begin_, end_), so each array's norm sums all its chunks.
void Adam::make_chunks() {
  chunks_ = norm_chunks(layout_, begin_, end_);
  chunk_squares_.assign(chunks_.size(), 0.0);
  chunk_exponents_.assign(chunks_.size(), 0);
  // The halves split_steps_with cuts each pass into: about as many owned floats on either side.
  std::size_t owned = 0;
  for (const auto& chunk : chunks_) owned += chunk.owned ? chunk.size : 0;
  std::size_t first_half = 0;
  half_chunk_ = 0;
  while (half_chunk_ < chunks_.size() && 2 * first_half < owned) {
    first_half += chunks_[half_chunk_].owned ? chunks_[half_chunk_].size : 0;
    ++half_chunk_;
  }
}

bool Adam::restrict_to(std::size_t begin, std::size_t end) {
  const bool coupled_l2 = settings_.coupled_l2();
  if (!valid_shard_range(layout_, begin, end, coupled_l2)) return false;
  begin_ = begin;
  end_ = end;
  const std::size_t owned = end - begin;
  first_moment_.assign(owned, 0.0f);
  second_moment_.assign(owned, 0.0f);
  averages_.assign(settings_.use_averages ? owned : 0, 0.0f);
  summed_.assign(owned, 0.0f);
  make_chunks();
  return true;
}

// source, target and the gradients hold the owned floats [begin_, end_); foreign_squares the sums of
// squares of the chunks not owned (foreign_norm_ranges), of the gradients' sum. Without a restriction
// begin_ is 0 and every chunk is owned.
void Adam::step(const float* source, float* target, const float* const* gradients, std::size_t count,
                const double* foreign_squares) {
  // Coupled L2 joins the gradient before clipping, as in Thinc's Optimizer.__call__.
  const bool coupled_l2 = settings_.coupled_l2();
  const bool gradient_as_is = count == 1 && !coupled_l2;

  // 1. Each chunk's gradient (one used where it lies; several summed in one pass) and its sum of squares.
  auto gather = [&](std::size_t c) {
    const auto& chunk = chunks_[c];
    if (!chunk.owned) {  // only its share of the array's norm; restrict_to refused coupled L2 here
      chunk_squares_[c] = settings_.grad_clip <= 0.0 ? 0.0 : foreign_squares[chunk.foreign];
      return;
    }
    const std::size_t at = chunk.begin - begin_;  // in the owned floats
    if (gradient_as_is) {
      chunk_squares_[c] = settings_.grad_clip > 0.0 ? sum_of_squares(gradients[0] + at, chunk.size) : 0.0;
    } else {
      chunk_squares_[c] = sum_gradients(summed_.data() + at, gradients, count, at, chunk.size,
                                        coupled_l2 ? source + at : nullptr, static_cast<float>(settings_.L2));
    }
  };
  // 2. Per array, in chunk order (the same sum whichever thread did which chunk): clip factor and
  //    Thinc's bias-corrected learning rate.
  // Every array steps each time, so the first array's count is the optimizer's step.
  const double learn_rate = learn_rate_at(steps_.empty() ? 0 : steps_[0], settings_.learn_rate);
  auto per_array = [&] {
    std::size_t c = 0;
    for (std::size_t a = 0; a < layout_.array_count(); ++a) {
      double squares = 0.0;
      for (; c < chunks_.size() && chunks_[c].array == a; ++c) squares += chunk_squares_[c];
      scale_[a] = clip_scale_from(squares, settings_.grad_clip);
      const auto t = static_cast<double>(++steps_[a]);
      if (settings_.rectified) {
        // Thinc's _radam counts from the update number plus one (its state's step is incremented after
        // being read from nr_update, which __call__ already incremented): its first step is t = 2.
        bool momentum_only = false;
        learn_rate_[a] = static_cast<float>(
            learn_rate * rectified_step_size(settings_.beta1, settings_.beta2, t + 1.0, momentum_only));
        momentum_only_[a] = momentum_only;
        continue;
      }
      learn_rate_[a] = static_cast<float>(learn_rate * std::sqrt(1.0 - std::pow(settings_.beta2, t)) /
                                          (1.0 - std::pow(settings_.beta1, t)));
    }
  };
  // 3. The update of each chunk.
  const auto b1 = static_cast<float>(settings_.beta1);
  const auto b2 = static_cast<float>(settings_.beta2);
  const auto eps = static_cast<float>(settings_.eps);
  const bool decays = settings_.decays_weights();
  const auto weight_decay = static_cast<float>(learn_rate * settings_.L2);
  auto update = [&](std::size_t c) {
    const auto& chunk = chunks_[c];
    if (!chunk.owned) return;
    const std::size_t size = chunk.size;
    const std::size_t at = chunk.begin - begin_;  // in the owned floats
    const float* w = source + at;
    const float* g = gradient_as_is ? gradients[0] + at : summed_.data() + at;
    float* m = first_moment_.data() + at;
    float* v = second_moment_.data() + at;
    float* out = target + at;
    const float scale = scale_[chunk.array];
    const float lr_t = learn_rate_[chunk.array];
    if (momentum_only_[chunk.array]) {
      chunk_exponents_[c] =
          out == w ? (decays ? momentum_update<true, true>(nullptr, out, g, m, v, size, scale, b1, b2, lr_t, weight_decay)
                             : momentum_update<false, true>(nullptr, out, g, m, v, size, scale, b1, b2, lr_t, weight_decay))
                   : (decays ? momentum_update<true, false>(w, out, g, m, v, size, scale, b1, b2, lr_t, weight_decay)
                             : momentum_update<false, false>(w, out, g, m, v, size, scale, b1, b2, lr_t, weight_decay));
    } else if (out == w) {
      chunk_exponents_[c] =
          decays ? adam_update<true, true>(nullptr, out, g, m, v, size, scale, b1, b2, eps, lr_t, weight_decay)
                 : adam_update<false, true>(nullptr, out, g, m, v, size, scale, b1, b2, eps, lr_t, weight_decay);
    } else {
      chunk_exponents_[c] =
          decays ? adam_update<true, false>(w, out, g, m, v, size, scale, b1, b2, eps, lr_t, weight_decay)
                 : adam_update<false, false>(w, out, g, m, v, size, scale, b1, b2, eps, lr_t, weight_decay);
    }
    if (settings_.use_averages) update_averages(averages_.data() + at, out, size, steps_[chunk.array]);
  };
  if (runner_ != nullptr) {
    // Each pass in two halves, perhaps on two threads: every chunk's results land in its own slots.
    const auto halves = [this](const auto& pass) {
      return [this, &pass](int part) {
        const std::size_t first = part == 0 ? 0 : half_chunk_;
        const std::size_t last = part == 0 ? half_chunk_ : chunks_.size();
        for (std::size_t c = first; c < last; ++c) pass(c);
      };
    };
    runner_->run(halves(gather));
    per_array();
    runner_->run(halves(update));
  } else {
    for (std::size_t c = 0; c < chunks_.size(); ++c) gather(c);
    per_array();
    for (std::size_t c = 0; c < chunks_.size(); ++c) update(c);
  }
  finite_ = true;
  for (std::size_t c = 0; c < chunks_.size(); ++c)
    finite_ = finite_ && std::isfinite(chunk_squares_[c]) && chunk_exponents_[c] != non_finite_exponent;
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

std::optional<std::string> Adam::state_problem(const OptimizerState& state) const {
  const std::size_t n = end_ - begin_;
  if (state.buffers.size() != 2 * n + averages_.size())
    return fmt::format("optimizer.buffers: {} floats, expected {} (the first and second moments{} of {} weights)",
                       state.buffers.size(), 2 * n + averages_.size(), averages_.empty() ? "" : " and averages", n);
  if (state.counts.size() != steps_.size())
    return fmt::format("optimizer.counts: {} step counts, expected one per parameter array ({})", state.counts.size(),
                       steps_.size());
  const float* buffers = state.buffers.data();
  if (const auto bad = first_non_finite(buffers, state.buffers.size())) {
    const char* part = *bad < n ? "first moment" : *bad < 2 * n ? "second moment" : "average";
    return fmt::format("optimizer.buffers: the {} of weight {} is {}", part, *bad % n, buffers[*bad]);
  }
  // v is a running mean of squares: below 0 no run writes it, and its square root would be NaN.
  for (std::size_t i = n; i < 2 * n; ++i)
    if (buffers[i] < 0.0f)
      return fmt::format("optimizer.buffers: the second moment of weight {} is {}, below 0", i - n, buffers[i]);
  return std::nullopt;
}

bool Adam::set_state(const OptimizerState& state) {
  const std::size_t n = end_ - begin_;
  if (state.buffers.size() != 2 * n + averages_.size() || state.counts.size() != steps_.size())
    return false;
  std::copy(state.buffers.begin(), state.buffers.begin() + n, first_moment_.begin());
  std::copy(state.buffers.begin() + n, state.buffers.begin() + 2 * n, second_moment_.begin());
  std::copy(state.buffers.begin() + 2 * n, state.buffers.end(), averages_.begin());
  steps_ = state.counts;
  return true;
}

}  // namespace psgrad
