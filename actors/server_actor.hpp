// What both kinds of parameter server actor share: the store behind them, the weights as workers
// receive them, the listener told of every gradient, and the messages every server answers alike.
#pragma once

#include <memory>
#include <utility>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "runtime/network_thread.hpp"
#include "actors/parameter_server.hpp"
#include "payloads/refused_payload.hpp"
#include "payloads/shared_memory.hpp"
#include "runtime/steady_time.hpp"
#include "payloads/wire_encoder.hpp"

namespace psgrad {

template <class Base>
class ServerActor : public Base {
 public:
  ServerActor(caf::actor_config& config, ParameterServerState& setup)
      : Base(config),
        store_(setup.layout, std::move(setup.weights), std::move(setup.optimizer), setup.begin, setup.end,
               setup.version),
        wire_(setup.wire, store_.size()),
        plan_{store_.begin(), store_.end(), store_.foreign_norm_ranges()},
        step_runner_(setup.step_runner) {
    if (step_runner_) store_.split_steps_with(step_runner_.get());
  }

  // A push from another process is stepped on the network thread that read it (network_thread.hpp):
  // a step is short. Measured, 2 worker processes over loopback, alternated, medians of 4: async 178k
  // samples/s against 147k, pipelined 216k against 183k, sync 180k against 177k.
  caf::resumable::subtype_t subtype() const override { return network_thread_subtype(true); }

 protected:
  // The server's behavior: its own handlers and those every server shares.
  template <class... Own>
  typename Base::behavior_type with_shared_handlers(Own... own) {
    return {
        std::move(own)...,
        [this](listen_atom, StepListener& listener, std::uint32_t shard) {
          listener_ = std::move(listener);
          shard_ = shard;
        },
        [this](weights_atom) -> Weights { return snapshot(); },
        [this](master_atom) -> Weights { return master(); },
        [this](averages_atom) -> caf::result<Weights> {
          const float* averages = store_.averages();
          // Before any step Thinc has no averages, and model.use_params(optimizer.averages) keeps the weights.
          if (averages && store_.version() == 0) return master();
          if (!averages)
            return caf::make_error(caf::sec::invalid_argument,
                                   "the optimizer keeps no weight averages (optimizer.use_averages is false)");
          // A copy: the averages are updated in place by every step.
          return Weights{store_.version(), store_.layout().hash(), FloatBuffer::copy_of(averages, store_.size())};
        },
        [this](state_atom) -> ServerState { return ServerState{master(), store_.optimizer_state()}; },
        [this](plan_atom) -> ShardPlan { return plan_; },
        [this](stop_atom) {
          this->quit();
          return true;
        },
    };
  }

  // The listener (the driver) holds its workers, which hold this server: let go, so all can be freed.
  void on_exit() override { listener_ = StepListener{}; }

  // A shard takes only the floats it holds, and the sums of squares its plan asks for (none from a
  // gradient that does not carry them for its step).
  caf::error check(const Gradients& gradients, bool carries_squares) const {
    if (gradients.values.refused()) return refused_payload_error("its " + gradients.values.refusal("gradient"));
    if (const auto differs = store_.layout().mismatch(gradients.layout_hash, gradients.values.size(), store_.begin(),
                                                      store_.end()))
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

  // One step of the store; `into_slot`: the new weights go into a slot of shared memory, where the
  // answer is sent from (the first answer through shared memory; the others copy it).
  caf::error step(const float* const* gradients, std::size_t count, const double* foreign_squares, float loss,
                  bool into_slot) {
    std::shared_ptr<float> slot;
    if (into_slot)
      if (auto reserved = reserve_in_shared_memory(store_.size() * sizeof(float)))
        slot = std::shared_ptr<float>(reserved, static_cast<float*>(reserved.get()));
    if (auto refused = store_.apply_gradients(gradients, count, foreign_squares, loss, std::move(slot)))
      return caf::make_error(caf::sec::runtime_error, std::move(*refused));
    return caf::error{};
  }

  // The listener hears of every gradient; `summed` 0 is a dropped one.
  void tell(const Gradients& gradients, std::uint32_t summed, std::int64_t started) {
    if (!listener_) return;
    this->send(listener_, applied_atom::value,
               StepNote{gradients.worker, gradients.samples, gradients.version, store_.version(), gradients.loss,
                        gradients.timing, shard_, summed, started, summed == 0 ? 0 : steady_now_ns()});
  }

  // The weights as workers get them (wire: encoded here), and the master weights themselves.
  Weights snapshot() {
    return Weights{store_.version(), store_.layout().hash(), wire_.encode(store_.weights(), store_.size())};
  }
  Weights master() const {
    return Weights{store_.version(), store_.layout().hash(), FloatBuffer(store_.weights(), store_.size())};
  }
  // An answer goes back the way its push came: through shared memory, the step writes the new weights
  // into the slot they are sent from (fp32; other wires send a rounded copy anyway).
  bool answered_in_place(const Gradients& pushed) const {
    return pushed.values.arrived_through_shared_memory() && wire_.encoding() == WireEncoding::fp32;
  }
  // A pusher on this host whose gradient came through shared memory gets its weights the same way.
  static Weights answer_to(const Gradients& pushed, Weights weights) {
    weights.values = weights.values.through_shared_memory(pushed.values.arrived_through_shared_memory());
    return weights;
  }

  ParameterStore store_;
  WeightsEncoder wire_;
  ShardPlan plan_;  // what pushers send this server
  StepListener listener_;  // told of every gradient a worker pushed, when set
  std::uint32_t shard_ = 0;
  std::shared_ptr<TwoPartRunner> step_runner_;  // runs the second half of each step's passes, if set
};

}  // namespace psgrad
