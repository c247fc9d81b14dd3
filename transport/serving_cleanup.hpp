// Stops what a served run started, whichever way it returns: the table shards' watch, the shard
// processes (with the run's failure as their exit reason when it failed), the port, the local actors.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "caf/actor.hpp"
#include "caf/actor_cast.hpp"
#include "caf/actor_system.hpp"
#include "actors/interfaces.hpp"
#include "actors/sparse_interfaces.hpp"
#include "transport/connection_gate.hpp"

namespace psgrad {

class ServingCleanup {
 public:
  explicit ServingCleanup(caf::actor_system& system) : system_(system) {}
  ServingCleanup(const ServingCleanup&) = delete;
  ServingCleanup& operator=(const ServingCleanup&) = delete;
  ~ServingCleanup();

  template <class Handle>
  void stop_on_exit(const Handle& actor) {
    actors_.push_back(caf::actor_cast<caf::actor>(actor));
  }
  void guarded_by(std::unique_ptr<ConnectionGate> gate) { gate_ = std::move(gate); }
  // Dense parameter shards in `psgrad shard` processes: asked to stop (acknowledged, so they exit cleanly
  // before this process goes away), or ended with the failure.
  void parameter_shard_processes(std::vector<ParameterServerActor> shards) { parameter_shards_ = std::move(shards); }
  // Table shards, in processes of their own or not: ended, with the failure when the run failed.
  void table_shards(std::vector<EmbeddingShardActor> shards) { table_shards_ = std::move(shards); }
  // Ended first: a shard's end that reached the watch would count as a loss.
  void watched_by(caf::actor watch) { watch_ = std::move(watch); }
  void run_failed(const std::string& why) { failure_ = why; }

 private:
  caf::actor_system& system_;
  std::unique_ptr<ConnectionGate> gate_;
  std::vector<caf::actor> actors_;
  std::vector<ParameterServerActor> parameter_shards_;
  std::vector<EmbeddingShardActor> table_shards_;
  caf::actor watch_;
  std::optional<std::string> failure_;
};

}  // namespace psgrad
