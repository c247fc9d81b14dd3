// The ParameterServer actor: owns the weights and the optimizer, applies gradients, hands out weights.
#pragma once

#include <memory>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/float_buffer.hpp"
#include "actors/interfaces.hpp"
#include "model/optimizer.hpp"
#include "model/parameter_layout.hpp"

namespace psgrad {

struct ParameterServerState {
  ParameterLayout layout;
  std::vector<float> weights;
  std::unique_ptr<Optimizer> optimizer;
  std::uint64_t version = 0;  // optimizer steps taken so far
};

// The server keeps running until it receives an exit message (or its last handle goes away).
ParameterServerActor spawn_parameter_server(caf::actor_system& system,
                                            std::shared_ptr<ParameterServerState> state);

}  // namespace psgrad
