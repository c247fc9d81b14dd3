#include "actors/parameter_server.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/result.hpp"
#include "caf/sec.hpp"
#include "actors/steady_time.hpp"
#include "actors/wire_encoder.hpp"

namespace psgrad {

namespace {

std::size_t shard_size(const ParameterServerState& state) {
  return state.end == 0 ? state.layout.total_size() : state.end - state.begin;
}

class ParameterServer : public ParameterServerActor::base {
 public:
  ParameterServer(caf::actor_config& config, std::shared_ptr<ParameterServerState> state)
      : ParameterServerActor::base(config),
        state_(std::move(state)),
        pool_(shard_size(*state_)),
        wire_(state_->wire, shard_size(*state_)) {
    if (state_->end == 0) state_->end = state_->layout.total_size();
    plan_ = ShardPlan{state_->begin, state_->end, state_->optimizer->foreign_norm_ranges()};
    current_ = pool_.acquire();
    current_->assign(state_->weights.begin(), state_->weights.end());
  }

  behavior_type make_behavior() override {
    return {
        [this](apply_atom, Gradients& gradients) -> caf::result<Weights> {
          if (auto error = check(gradients, true)) return error;
          if (barrier_) return gather(std::move(gradients));
          const auto started = steady_now_ns();
          const float* values = gradients.values.data();  // this shard's floats
          if (auto error = step(&values, 1, gradients.foreign_squares, gradients.loss)) return error;
          tell(gradients, 1, started);
          return snapshot();
        },
        [this](listen_atom, StepListener& listener, std::uint32_t shard) {
          listener_ = std::move(listener);
          shard_ = shard;
        },
        [this](barrier_atom, std::vector<std::uint32_t>& members, std::uint32_t needed) {
          barrier_ = true;
          members_ = std::move(members);
          needed_ = needed;
          // A worker no longer listed will not be waited for: what it sent is dropped with it.
          for (std::size_t k = 0; k < pending_.size(); ++k)
            if (pending_[k].waiting && !member(k)) answer_dropped(pending_[k]);
          take_step_if_ready();
          std::vector<std::uint32_t> waiting;
          for (std::size_t k = 0; k < pending_.size(); ++k)
            if (pending_[k].waiting) waiting.push_back(static_cast<std::uint32_t>(k));
          return waiting;
        },
        [this](apply_atom, const std::vector<Gradients>& all) -> caf::result<Weights> {
          if (all.empty()) return caf::make_error(caf::sec::invalid_argument, "no gradients to apply");
          // The sums of squares of foreign chunks are of the sum, so only the first gradient has them.
          for (std::size_t k = 0; k < all.size(); ++k)
            if (auto error = check(all[k], k == 0)) return error;
          // Summed in the given (worker) order so that the result is deterministic.
          gradient_slices_.clear();
          float loss = 0.0f;  // the first non-finite loss, if any: the one a divergence message names
          for (const auto& gradients : all) {
            gradient_slices_.push_back(gradients.values.data());
            if (std::isfinite(loss)) loss = gradients.loss;
          }
          if (auto error = step(gradient_slices_.data(), gradient_slices_.size(), all[0].foreign_squares, loss))
            return error;
          return snapshot();
        },
        [this](weights_atom) -> Weights { return snapshot(); },
        [this](master_atom) -> Weights { return master(); },
        [this](state_atom) -> ServerState { return ServerState{master(), state_->optimizer->state()}; },
        [this](plan_atom) -> ShardPlan { return plan_; },
        [this](stop_atom) {
          quit();
          return true;
        },
    };
  }

 private:
  // The listener (the driver) holds its workers, which hold this server: let go, so all can be freed.
  void on_exit() override {
    listener_ = StepListener{};
    pending_.clear();
  }

  // A shard takes only the floats it holds, and the sums of squares its plan asks for (none from a
  // gradient that does not carry them for its step).
  caf::error check(const Gradients& gradients, bool carries_squares) const {
    if (const auto differs = state_->layout.mismatch(gradients.layout_hash, gradients.values.size(),
                                                     state_->begin, state_->end))
      return caf::make_error(caf::sec::invalid_argument,
                             fmt::format("gradients from worker {} do not fit the model layout ({})",
                                         gradients.worker, *differs));
    const std::size_t expected = carries_squares ? plan_.foreign_chunks.size() : 0;
    if (gradients.foreign_squares.size() != expected)
      return caf::make_error(caf::sec::invalid_argument,
                             fmt::format("gradients from worker {} carry {} sums of squares of chunks held by other "
                                         "shards; expected {}",
                                         gradients.worker, gradients.foreign_squares.size(), expected));
    return caf::error{};
  }

  // -- sync: the barrier sits where the gradients arrive, so a gradient goes worker -> server -> worker
  struct Pending {
    Gradients gradients;
    caf::typed_response_promise<Weights> promise;
    bool waiting = false;
  };

  bool member(std::size_t worker) const {
    return std::find(members_.begin(), members_.end(), worker) != members_.end();
  }

  caf::result<Weights> gather(Gradients gradients) {
    const auto worker = gradients.worker;
    if (pending_.size() <= worker) pending_.resize(worker + 1);
    auto& slot = pending_[worker];
    // From weights a step ago (a backup worker's late gradient), or from a worker not (or no longer)
    // listed: dropped, and the worker computes from the current weights.
    if (gradients.version != state_->version || !member(worker) || slot.waiting) {
      tell(gradients, 0, 0);
      return snapshot();
    }
    slot.gradients = std::move(gradients);
    slot.promise = make_response_promise<Weights>();
    slot.waiting = true;
    auto promise = slot.promise;
    take_step_if_ready();
    return promise;
  }

  void answer_dropped(Pending& slot) {
    tell(slot.gradients, 0, 0);
    slot.promise.deliver(snapshot());
    slot = Pending{};
  }

  // With backup workers the step takes the first `needed` gradients to arrive; they are summed in
  // worker order so that the result does not depend on the order they came in.
  void take_step_if_ready() {
    std::size_t gathered = 0;
    for (const auto& slot : pending_) gathered += slot.waiting ? 1 : 0;
    if (!barrier_ || needed_ == 0 || gathered < needed_) return;
    const auto started = steady_now_ns();
    gradient_slices_.clear();
    float loss = 0.0f;  // the first non-finite loss, if any: the one a divergence message names
    std::vector<double> first_squares;
    for (const auto& slot : pending_) {
      if (!slot.waiting) continue;
      if (gradient_slices_.empty()) first_squares = slot.gradients.foreign_squares;
      gradient_slices_.push_back(slot.gradients.values.data());
      if (std::isfinite(loss)) loss = slot.gradients.loss;
    }
    // Not yet the squares of the sum: those of the first gradient.
    const auto error = step(gradient_slices_.data(), gradient_slices_.size(), first_squares, loss);
    const auto weights = error ? Weights{} : snapshot();
    for (auto& slot : pending_) {
      if (!slot.waiting) continue;
      if (error) {
        slot.promise.deliver(error);
      } else {
        tell(slot.gradients, static_cast<std::uint32_t>(gathered), started);
        slot.promise.deliver(weights);
      }
      slot = Pending{};
    }
  }

  // The listener hears of every gradient; `summed` 0 is a dropped one.
  void tell(const Gradients& gradients, std::uint32_t summed, std::int64_t started) {
    if (!listener_) return;
    send(listener_, applied_atom::value,
         StepNote{gradients.worker, gradients.samples, gradients.version, state_->version, gradients.loss,
                  gradients.timing, shard_, summed, started, summed == 0 ? 0 : steady_now_ns()});
  }

  // Divergence is caught here, the step it happens: a NaN or infinite loss is refused before it
  // touches the weights; a step that produced non-finite weights stops the run too.
  caf::error step(const float* const* gradients, std::size_t count, const std::vector<double>& foreign_squares,
                  float loss) {
    const auto next_step = state_->version + 1;
    if (!std::isfinite(loss)) return diverged(fmt::format("the loss is {}", loss), next_step);
    // Weights already handed out stay immutable: when anyone besides the pool and current_ still holds
    // them, the step reads them and writes a free buffer (no copy first); otherwise it works in place.
    if (current_.use_count() > 2) {
      auto next = pool_.acquire();
      state_->optimizer->apply_gradients(current_->data(), next->data(), gradients, count, foreign_squares.data());
      current_ = std::move(next);
    } else {
      state_->optimizer->apply_gradients(current_->data(), current_->data(), gradients, count, foreign_squares.data());
    }
    if (!state_->optimizer->last_step_finite())
      return diverged(fmt::format("the gradients or the new weights are not finite (loss {:.4g})", loss), next_step);
    ++state_->version;
    return caf::error{};
  }

  static caf::error diverged(const std::string& what, std::uint64_t step) {
    return caf::make_error(caf::sec::runtime_error,
                           fmt::format("training diverged at step {}: {}; lower optimizer.learn_rate or keep "
                                       "optimizer.grad_clip on, and resume from the last checkpoint",
                                       step, what));
  }

  // The weights as workers get them (wire: encoded here), and the master weights themselves.
  Weights snapshot() {
    return Weights{state_->version, state_->layout.hash(), wire_.encode(current_)};
  }
  Weights master() const { return Weights{state_->version, state_->layout.hash(), FloatBuffer(current_)}; }

  std::shared_ptr<ParameterServerState> state_;
  BufferPool pool_;
  std::shared_ptr<AlignedFloats> current_;  // held by pool_ too
  WeightsEncoder wire_;
  ShardPlan plan_;  // what pushers send this server
  std::vector<const float*> gradient_slices_;  // each gradient, in worker order
  StepListener listener_;  // told of every gradient a worker pushed, when set
  std::uint32_t shard_ = 0;
  // sync: who takes part, how many gradients a step sums, and the gradients waiting for their step
  bool barrier_ = false;
  std::vector<std::uint32_t> members_;
  std::uint32_t needed_ = 0;
  std::vector<Pending> pending_;
};

}  // namespace

std::vector<std::size_t> shard_cuts(const ParameterLayout& layout, std::size_t count, std::size_t grain) {
  // Where a cut may fall: the start of an array, every `grain` floats into one, and the end.
  std::vector<std::size_t> allowed;
  for (const auto& array : layout.arrays())
    for (std::size_t at = 0; at < array.size(); at += grain) allowed.push_back(array.offset + at);
  allowed.push_back(layout.total_size());
  std::vector<std::size_t> cuts = {0};
  std::size_t from = 1;  // index in `allowed` of the first point the next cut may use
  for (std::size_t i = 1; i < count; ++i) {
    const double target = static_cast<double>(layout.total_size()) * static_cast<double>(i) / static_cast<double>(count);
    // Leave a point for every later cut and the end.
    const std::size_t last = allowed.size() - 1 - (count - i);
    if (from > last) return {};
    std::size_t best = from;
    for (std::size_t p = from; p <= last; ++p)
      if (std::fabs(static_cast<double>(allowed[p]) - target) < std::fabs(static_cast<double>(allowed[best]) - target))
        best = p;
    cuts.push_back(allowed[best]);
    from = best + 1;
  }
  cuts.push_back(layout.total_size());
  return cuts;
}

ParameterServerActor spawn_parameter_server(caf::actor_system& system,
                                            std::shared_ptr<ParameterServerState> state) {
  return system.spawn<ParameterServer>(std::move(state));
}

}  // namespace psgrad
