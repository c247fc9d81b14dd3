// The evaluator of sparse runs, behind the Evaluator interface: scores each dense weight snapshot with
// the dev set's rows pulled from the table shards at the snapshot's version (sync: the rows of the same
// step; async: the rows as they are), in the order of the requests.
#pragma once

#include <memory>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/evaluator.hpp"
#include "actors/pull_parts.hpp"
#include "actors/sparse_interfaces.hpp"
#include "actors/training_job.hpp"
#include "model/sparse_dataset.hpp"

namespace psgrad {

// Where the evaluator runs. Beside workers in one process it needs a thread of its own, so a long
// evaluation never queues a worker behind it. In a server whose shards are other processes it runs on
// the scheduler: there CAF's network layer may still hold a reference to it as the process ends (seen
// about once in 60 runs under load), and the actor system waits forever to free a detached actor,
// while one on the scheduler is freed or not without holding up the exit.
enum class EvaluatorThread { own, scheduler };

// How the evaluator pulls and where it runs. The dev set's keys are pulled from each shard in parts of at
// most keys_per_part keys (pull_parts.hpp); shards on this host (per shard, or none) answer their rows
// through shared memory (payloads/shared_rows.hpp).
struct SparseEvaluatorPlacement {
  std::size_t keys_per_part = kKeysPerPullPart;
  EvaluatorThread thread = EvaluatorThread::own;
  std::vector<bool> shards_on_this_host;
};

// on_snapshot, then on_report, run for every report before the evaluator answers, as for dense runs.
Result<EvaluatorActor> spawn_sparse_evaluator(caf::actor_system& system, const TrainingJob& job,
                                              std::shared_ptr<const SparseDataset> dev,
                                              std::vector<EmbeddingShardActor> shards, ReportCallback on_report,
                                              SnapshotCallback on_snapshot = {},
                                              SparseEvaluatorPlacement placement = {});

}  // namespace psgrad
