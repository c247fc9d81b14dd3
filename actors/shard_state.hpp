// Splits a parameter server's checkpointable state into shards and joins shards' states back, so a
// checkpoint has one format whatever cluster.servers was, and any run can resume from it.
#pragma once

#include <cstddef>
#include <vector>

#include "payloads/messages.hpp"
#include "model/optimizer.hpp"
#include "model/result.hpp"

namespace psgrad {

// The part of a whole-model optimizer state that a shard owning floats [begin, end) of `total` takes:
// the same floats of every per-float buffer (Adam: first moments, second moments, averages), and
// every array's step count (each shard counts every array's steps).
OptimizerState slice_optimizer_state(const OptimizerState& whole, std::size_t total, std::size_t begin,
                                     std::size_t end);

// The shards' states, in layout order, as one server would report its own; an error when they do not
// fit together (different versions or step counts).
Result<ServerState> join_server_states(const std::vector<ServerState>& parts);

}  // namespace psgrad
