// The direct routes of a sparse run across processes: a table shard process's own port, and a worker
// process dialling every table shard, so rows travel between a worker and a shard alone.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/sparse_interfaces.hpp"
#include "model/result.hpp"
#include "transport/connection_gate.hpp"
#include "transport/shard_listener.hpp"

namespace psgrad {

class TableShardPort {
 public:
  // Listens for workers with `shard` as the published actor, behind the run's gate (or TLS).
  static Result<TableShardPort> open(caf::actor_system& system, const EmbeddingShardActor& shard,
                                     const ShardListenSetup& setup);

  const std::string& host() const { return host_; }
  std::uint16_t port() const { return port_; }

 private:
  std::string host_;
  std::uint16_t port_ = 0;
  std::unique_ptr<ConnectionGate> gate_;  // plain mode; a TLS port closes with the actor system
};

// Dials every table shard at the address it joined with and checks it is the shard the server named:
// CAF then routes this process's messages to it over that connection. An error names the shard and
// its address.
Status dial_table_shards(caf::actor_system& system, const std::vector<TableShardAddress>& shards,
                         const std::string& token, bool tls, const std::function<void(const std::string&)>& on_retry);

}  // namespace psgrad
