// A table shard process of a sparse run: after its hello, it checks that its share of the tables fits
// this machine, holds that share in an EmbeddingShard, listens for workers, joins, and serves until the
// server stops it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "caf/scoped_actor.hpp"
#include "actors/sparse_interfaces.hpp"
#include "actors/training_job.hpp"
#include "model/result.hpp"
#include "model/table_optimizer.hpp"
#include "transport/remote_client.hpp"
#include "transport/shard_listener.hpp"

namespace psgrad {

struct TableShardProcessSetup {
  std::uint32_t index = 0;
  TrainingJob job;  // built from the offer's config; model.architecture names a sparse architecture
  TableOptimizerChoice optimizer;
  ShardListenSetup listen;  // where workers reach this shard
  std::string name;         // this process, for the server's messages (host and pid)
  std::optional<std::uint64_t> machine_bytes;  // this machine's memory; nothing: not checked
  std::function<void(const std::string&)> say;
  std::function<void(const EmbeddingShardActor&)> on_joined;  // told the shard once the server took it
};

// The share of the tables this shard would hold with every key it owns touched, or the one-line
// refusal when that exceeds machine_bytes ("table shard 1 of 4: its share of the tables needs ...").
Status check_table_share_fits(const TableShardProcessSetup& setup, std::uint64_t num_classes);

// Blocks until the server stops the shard (finished, or failed on the server) or goes away (an error).
Result<RunEnding> serve_table_shard(caf::scoped_actor& self, const ServerConnection& connection,
                                    const TableShardProcessSetup& setup);

}  // namespace psgrad
