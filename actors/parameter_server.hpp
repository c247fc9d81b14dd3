// The ParameterServer actor: owns the weights and the optimizer, applies gradients, hands out weights.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/interfaces.hpp"
#include "runtime/step_helper.hpp"
#include "model/optimizer.hpp"
#include "model/parameter_layout.hpp"
#include "model/training_mode.hpp"
#include "model/wire_encoding.hpp"
#include "store/parameter_store.hpp"

namespace psgrad {

// What a server starts from: the whole parameter buffer, or one shard of it (the floats [begin, end)
// of the model's layout, with an optimizer restricted to them, Optimizer::restrict_to). A shard
// receives only its floats of each gradient, and the sums of squares of the chunks held elsewhere that
// its clip norms need (its ShardPlan, asked with plan_atom): with each push in async/ssp, from the
// shards that hold them once per sync step (of the step's summed gradients). So an array cut between
// shards is clipped by the norm of all of it. The server takes the weights and optimizer into its
// ParameterStore.
struct ParameterServerState {
  ParameterLayout layout;       // the whole model's
  std::vector<float> weights;   // end - begin floats
  std::unique_ptr<Optimizer> optimizer;
  std::uint64_t version = 0;  // optimizer steps taken so far
  std::size_t begin = 0;
  std::size_t end = 0;  // 0: the whole buffer
  TrainingMode mode = TrainingMode::sync;  // sync: the barrier server; async/ssp: each push applied as it comes
  WireEncoding wire = WireEncoding::fp32;  // the run's: weights go out as weights_encoding(wire)
  bool ordered_answers = false;  // sync: a step's answers to remote workers go one after another
  // sync with cluster.pipeline: each worker keeps two pushes out, so a step sums gradients computed from
  // the weights one step older than its own (or, after a stopping point, from its own)
  bool pipelined = false;
  std::shared_ptr<TwoPartRunner> step_runner;  // the optimizer splits its steps with it, if set
  std::shared_ptr<StepHelper> step_helper;     // woken as each plain sync step starts, if set
  // Sync: told, as each step is taken, its version and the workers whose gradients it sums (the first to
  // arrive, with backup workers), so that a model's table shards sum those workers' rows alone; empty: none.
  std::function<void(std::uint64_t version, const std::vector<std::uint32_t>& workers)> on_step_workers;
};

// What a server holding `state` receives of each gradient: its floats, and the foreign chunks whose
// sums of squares its clip norms need.
ShardPlan plan_of(const ParameterServerState& state);

// A server for state.mode (sync_parameter_server.cpp, async_parameter_server.cpp). It keeps running
// until it receives an exit message (or its last handle goes away).
ParameterServerActor spawn_parameter_server(caf::actor_system& system,
                                            std::shared_ptr<ParameterServerState> state);

}  // namespace psgrad
