#include "actors/parameter_server.hpp"

#include "actors/async_parameter_server.hpp"
#include "actors/actor_config.hpp"
#include "actors/sync_parameter_server.hpp"

namespace psgrad {

ShardPlan plan_of(const ParameterServerState& state) {
  const auto end = state.end == 0 ? state.layout.total_size() : state.end;
  return ShardPlan{state.begin, end, state.optimizer->foreign_norm_ranges()};
}

ParameterServerActor spawn_parameter_server(caf::actor_system& system,
                                            std::shared_ptr<ParameterServerState> state) {
  // Where idle scheduler threads poll, or a step helper watches, they take on half of each step.
  if (auto help = idle_help_of(system)) state->step_runner = std::move(help);
  state->step_helper = step_helper_of(system);  // with idle_help_of(system) set: its thread takes halves
  if (state->mode == TrainingMode::sync) return spawn_sync_parameter_server(system, std::move(state));
  return spawn_async_parameter_server(system, std::move(state));
}

}  // namespace psgrad
