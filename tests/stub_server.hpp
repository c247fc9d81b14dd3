// A stand-in parameter server for actor tests: its own answer to pushes, nothing useful to the rest.
#pragma once

#include <cstdint>
#include <vector>

#include "actors/interfaces.hpp"

namespace psgrad::testing {

// `push` answers a gradient; every other message gets an empty answer.
template <class Push>
ParameterServerActor::behavior_type stub_server(Push push) {
  return {std::move(push),
          [](listen_atom, StepListener, std::uint32_t) {},
          [](barrier_atom, std::vector<std::uint32_t>& members, std::uint32_t) { return members; },
          [](weights_atom) { return Weights{}; },
          [](master_atom) { return Weights{}; },
          [](averages_atom) { return Weights{}; },
          [](state_atom) { return ServerState{}; },
          [](plan_atom) { return ShardPlan{}; },
          [](peers_atom, std::uint32_t, std::vector<ShardPeer>&, std::vector<ShardPlan>&) { return true; },
          [](squares_atom, ShardSquares&) {},
          [](received_atom, std::uint32_t, std::uint64_t) {},
          [](stop_atom) { return true; }};
}

}  // namespace psgrad::testing
