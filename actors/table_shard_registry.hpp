// The TableShardRegistry actor: the part of a sparse run's coordinator that admits embedding table shard
// processes, tells each how it starts (and a resumed run's rows it holds), checks every shard's and
// worker's tables' layout against the server's, and tells workers (and the server) where every shard is
// once all have joined.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "caf/actor_system.hpp"
#include "actors/sparse_interfaces.hpp"
#include "actors/table_shard_watch.hpp"
#include "model/checkpoint_tables.hpp"
#include "model/table_layout.hpp"

namespace psgrad {

struct TableShardRegistrySetup {
  std::uint32_t shards = 1;  // table shard processes, indices 0 .. shards - 1
  TableLayout layout;        // the server's
  std::string config;        // the resolved configuration (TOML) each shard builds from
  std::uint64_t num_classes = 0;
  std::string token;  // checked in the hello over TLS; empty: the gate checked it already
  std::function<void(const std::string&)> on_event;  // one line per join or refusal
  TableShardStart start;  // how every shard starts; its pieces are counted per shard
  // A resumed run's checkpoint: each shard is sent its part of the rows, re-split for `shards`, in pieces
  // of at most piece_words words (a connection then never carries one huge message). Null: a fresh run.
  std::shared_ptr<const TrainingCheckpoint> resume;
  std::uint64_t piece_words = std::uint64_t{1} << 22;  // 16 MiB
  // Notes a joined shard that goes away: before the run starts no watch does, and the server, waiting for
  // workers that cannot reach that shard, would wait until cluster.join_timeout_ms. Null: not noted.
  std::shared_ptr<TableShardLoss> loss;
};

TableShardRegistryActor spawn_table_shard_registry(caf::actor_system& system, TableShardRegistrySetup setup);

}  // namespace psgrad
