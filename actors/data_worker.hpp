// The DataWorker actor: a model copy and its own shuffled data stream; computes gradients from the
// weights it is given. A model with embedding tables adds its rows to each step: pulled from the table
// shards before the gradient, their gradients pushed after it (actors/worker_rows.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "caf/actor_system.hpp"
#include "caf/node_id.hpp"
#include "runtime/idle_help.hpp"
#include "actors/interfaces.hpp"
#include "actors/worker_rows.hpp"
#include "runtime/model_workspaces.hpp"
#include "runtime/server_wait.hpp"
#include "actors/training_job.hpp"
#include "model/dataset.hpp"

namespace psgrad {

struct DataWorkerSetup {
  TrainingJob job;
  std::size_t worker_index = 0;
  std::shared_ptr<const Dataset> train;
  std::chrono::milliseconds delay{0};  // extra time per gradient, to simulate a slow machine
  std::optional<WorkerStreamState> resume;  // continue a checkpointed data stream
  // Own thread, so several workers in one process cannot starve each other on the scheduler. A
  // worker process runs a single worker and keeps it scheduled: CAF 0.17 may keep a detached actor
  // that was sent over the network alive past the end, and the process would never exit.
  bool detached = true;
  // The server processes (CAF nodes) on this host that take payloads through shared memory: pushes to
  // them go that way (payloads/shared_memory.hpp), and so come their answers.
  std::vector<caf::node_id> shared_memory_nodes;
  // Workers of one process that share its scheduler threads (not detached) borrow a model per gradient
  // from here instead of each keeping one (runtime/model_workspaces.hpp); null: a model of its own.
  std::shared_ptr<ModelWorkspaces> workspaces;
  // A detached worker in a process whose server steps split in halves (ActorConfig::idle_help): it takes
  // on the half on offer while it waits for its answer; null: it waits asleep.
  std::shared_ptr<IdleHelp> help;
  // In a worker process: whether its server is silent now (runtime/server_wait.hpp); time it is counts
  // toward the process's wait for it, not toward a push's answer timeout. Null: every moment counts.
  std::shared_ptr<const ServerSilence> server_silence;
  // A model with embedding tables: its examples with id fields and its table shards (then `train` is
  // unused, and `workspaces` and `help` do not apply).
  std::optional<WorkerTables> tables;
};

struct SpawnedDataWorker {
  DataWorkerActor actor;
  std::uint64_t layout_hash = 0;  // of the model it built, for joining a server
  std::uint64_t parameters = 0;   // the model's float count: no payload of its run is larger
};

// Fails when the job's model cannot be built for the data set (or its fields are not the data's).
Result<SpawnedDataWorker> spawn_data_worker(caf::actor_system& system, DataWorkerSetup setup);

}  // namespace psgrad
