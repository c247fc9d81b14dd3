// The Coordinator actor: admits worker processes to a run and hands the server their DataWorkers.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/interfaces.hpp"

namespace psgrad {

struct CoordinatorSetup {
  std::string config;  // the resolved configuration (TOML) every worker builds from
  std::uint32_t num_workers = 0;
  std::string token;  // empty: no token needed
  std::uint64_t layout_hash = 0;
  std::uint64_t input_width = 0;
  std::uint64_t num_classes = 0;
  std::function<void(const std::string&)> on_event;  // one line per join, refusal or loss
  bool elastic = false;  // admit workers while training runs, handing them to the driver
  std::vector<WorkerStreamState> resume_streams;  // by worker index, when resuming a checkpoint
  std::uint32_t remote_shards = 0;  // server shards 1..remote_shards that run in their own processes
};

CoordinatorActor spawn_coordinator(caf::actor_system& system, CoordinatorSetup setup);

}  // namespace psgrad
