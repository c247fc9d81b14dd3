// The SparseWorker actor: a sparse model and its own shuffled stream over examples with id fields, behind
// the DataWorker interface, so the training driver runs it as any worker. Per batch it looks up the
// batch's keys, pulls their rows from the table shards (split by key % shards, in parallel), computes
// with the dense weights the servers handed it, then pushes the row gradients to the shards and the
// dense gradient to the servers, whose answer brings the next weights.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "caf/actor_system.hpp"
#include "caf/node_id.hpp"
#include "actors/interfaces.hpp"
#include "actors/sparse_interfaces.hpp"
#include "actors/training_job.hpp"
#include "model/checkpoint.hpp"
#include "model/sparse_dataset.hpp"

namespace psgrad {

struct SparseWorkerSetup {
  TrainingJob job;  // model.architecture names a sparse architecture
  std::size_t worker_index = 0;
  std::shared_ptr<const SparseDataset> train;
  std::vector<EmbeddingShardActor> shards;  // in index order
  std::optional<WorkerStreamState> resume;  // a checkpoint's stream position and dropout generator
  // Server processes on this host: the dense gradient and weights go to and from them through shared
  // memory (payloads/shared_memory.hpp), as a dense worker's do.
  std::vector<caf::node_id> shared_memory_nodes;
  // Per table shard (or none): it is a process on this host, so rows go to and from it through shared
  // memory (payloads/shared_rows.hpp).
  std::vector<bool> shards_on_this_host;
};

// Fails when the model cannot be built, or its fields are not the data's.
Result<DataWorkerActor> spawn_sparse_worker(caf::actor_system& system, SparseWorkerSetup setup);

}  // namespace psgrad
