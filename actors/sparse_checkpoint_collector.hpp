// Makes the driver's dense checkpoints whole for a sparse run: asks every table shard for its part of the
// tables at the checkpoint's version and hands dense part and shards' parts on together, in the order
// the checkpoints were taken.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/sparse_interfaces.hpp"
#include "model/checkpoint.hpp"
#include "model/data_fingerprint.hpp"
#include "model/checkpoint_tables.hpp"
#include "model/training_mode.hpp"

namespace psgrad {

struct SparseCheckpointSetup {
  std::vector<EmbeddingShardActor> shards;  // in index order
  caf::timespan timeout;
  TrainingMode mode = TrainingMode::sync;
  std::string row_optimizer;  // the tables' RowOptimizer::name()
  DataFingerprint data;       // of the training set the workers' streams index into
  std::string config;         // the run's config text
  std::function<void(const TrainingCheckpoint&)> on_checkpoint;
};

class SparseCheckpointCollector {
 public:
  SparseCheckpointCollector(caf::actor_system& system, SparseCheckpointSetup setup);

  // The driver's on_checkpoint: returns at once; the shards' parts are gathered by an actor of its own,
  // since the driver must not block. Sync shards hold the checkpoint's step until they are asked.
  std::function<void(const TrainingCheckpoint&)> hook() const;

  // Waits until every checkpoint handed to the hook has been passed on; the first failure, if any
  // ("checkpoint at iteration 4: table shard 1: ...").
  Status wait() const;

 private:
  struct State;
  caf::actor_system* system_;
  std::shared_ptr<State> state_;
};

}  // namespace psgrad
