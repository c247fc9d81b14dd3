// Spawns the async/ssp kind of ParameterServer (spawn_parameter_server picks it by mode).
#pragma once

#include "actors/parameter_server.hpp"

namespace psgrad {

ParameterServerActor spawn_async_parameter_server(caf::actor_system& system,
                                                  std::shared_ptr<ParameterServerState> state);

}  // namespace psgrad
