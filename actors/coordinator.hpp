// The Coordinator actor: admits worker processes to a run and hands the server their DataWorkers.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <functional>
#include <string>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/interfaces.hpp"
#include "model/data_fingerprint.hpp"

namespace psgrad {

// How joining went so far, for the server to say when it gives up waiting; the coordinator counts.
struct JoinTally {
  std::atomic<std::uint32_t> workers_joined{0};
  std::atomic<std::uint32_t> refused{0};  // worker hellos and joins refused, and psgrad peers the gate turned away
  std::atomic<std::uint32_t> shards_joined{0};
  std::atomic<std::uint32_t> shards_refused{0};  // shard process hellos and joins refused
};

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
  // A model with tables: its dense part's layout, which shard processes hold slices of (workers are checked
  // against layout_hash, the tables' layout), and the number columns that part reads.
  std::uint64_t shard_layout_hash = 0;  // 0: layout_hash
  std::vector<std::string> number_names;
  std::shared_ptr<JoinTally> tally;  // null: nobody asks
  DataFingerprint data;  // the server's training set; empty: not checked
  std::optional<ServerState> resume_server;  // a resumed run's whole server state, for shard processes
  std::string host_identity;  // the server process's, told to workers and shards; empty: no shared memory
  TableShardRegistryActor tables;  // a sparse run's table shards; null: the run has no embedding tables
};

CoordinatorActor spawn_coordinator(caf::actor_system& system, CoordinatorSetup setup);

}  // namespace psgrad
