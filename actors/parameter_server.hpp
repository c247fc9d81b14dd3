// The ParameterServer actor: owns the weights and the optimizer, applies gradients, hands out weights.
#pragma once

#include <memory>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/float_buffer.hpp"
#include "actors/interfaces.hpp"
#include "model/optimizer.hpp"
#include "model/parameter_layout.hpp"
#include "model/wire_encoding.hpp"

namespace psgrad {

// A server holds the whole parameter buffer, or one shard of it: the floats [begin, end) of the
// model's layout, on parameter-array boundaries, with an optimizer over just those arrays.
struct ParameterServerState {
  ParameterLayout layout;       // the whole model's
  std::vector<float> weights;   // end - begin floats
  std::unique_ptr<Optimizer> optimizer;
  std::uint64_t version = 0;  // optimizer steps taken so far
  std::size_t begin = 0;
  std::size_t end = 0;  // 0: the whole buffer
  WireEncoding wire = WireEncoding::fp32;  // the run's: weights go out as weights_encoding(wire)
};

// Splits the layout into `count` contiguous shards on array boundaries, balanced by size: each entry
// is the index of a shard's first array (and the array count ends the last).
std::vector<std::size_t> shard_boundaries(const ParameterLayout& layout, std::size_t count);
// The arrays [first, last) as a layout of their own, offsets from the shard's start.
ParameterLayout shard_layout(const ParameterLayout& layout, std::size_t first, std::size_t last);

// The server keeps running until it receives an exit message (or its last handle goes away).
ParameterServerActor spawn_parameter_server(caf::actor_system& system,
                                            std::shared_ptr<ParameterServerState> state);

}  // namespace psgrad
