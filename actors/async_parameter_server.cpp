// The async/ssp ParameterServer: every push is applied the moment it arrives (the fan-in loop), and its
// worker is answered with the newest weights; the driver's credits keep the schedule.
#include "actors/async_parameter_server.hpp"

#include "actors/server_actor.hpp"

namespace psgrad {

namespace {

class AsyncParameterServer : public ServerActor<ParameterServerActor::base> {
 public:
  AsyncParameterServer(caf::actor_config& config, std::shared_ptr<ParameterServerState> setup)
      : ServerActor(config, *setup) {}

  behavior_type make_behavior() override {
    return with_shared_handlers(
        [this](apply_atom, Gradients& gradients) -> caf::result<Weights> {
          if (auto error = check(gradients, true)) return error;
          const auto started = steady_now_ns();
          const float* values = gradients.values.data();  // this shard's floats
          if (auto error = step(&values, 1, gradients.foreign_squares.data(), gradients.loss,
                                answered_in_place(gradients)))
            return error;
          tell(gradients, 1, started);
          return answer_to(gradients, snapshot());
        },
        // The sync protocol's messages: an async server takes part in no barrier and no agreement.
        [](barrier_atom, std::vector<std::uint32_t>&, std::uint32_t) -> caf::result<std::vector<std::uint32_t>> {
          return refused("barrier");
        },
        [](peers_atom, std::uint32_t, std::vector<ShardPeer>&, std::vector<ShardPlan>&) -> caf::result<bool> {
          return refused("peers");
        },
        [](squares_atom, ShardSquares&) {},
        [](received_atom, std::uint32_t, std::uint64_t) {});
  }

 private:
  static caf::error refused(const char* what) {
    return caf::make_error(caf::sec::invalid_argument,
                           fmt::format("an async parameter server takes no '{}' message: it belongs to sync", what));
  }
};

}  // namespace

ParameterServerActor spawn_async_parameter_server(caf::actor_system& system,
                                                  std::shared_ptr<ParameterServerState> state) {
  return system.spawn<AsyncParameterServer>(std::move(state));
}

}  // namespace psgrad
