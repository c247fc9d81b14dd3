// The EmbeddingShard actor: one shard of every embedding table of a sparse model (the keys
// k % count == index) with its row optimizer. Sync: a step's pushes from every worker are summed per key
// in worker order and applied once, and a pull for the weights of version t + 1 is answered once step t
// is applied here. Async: each push is applied as it arrives and a pull answers with the rows as they
// are. Rows are made only when a gradient reaches them, so a key no batch touched has no row.
#pragma once

#include <cstdint>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/sparse_interfaces.hpp"
#include "model/embedding_table.hpp"
#include "model/job.hpp"
#include "model/table_state.hpp"
#include "model/result.hpp"
#include "model/table_optimizer.hpp"
#include "model/training_mode.hpp"

namespace psgrad {

// Sync: the versions whose step waits until the evaluator has pulled the rows of that version, so that an
// evaluation scores the dense weights of a stopping point with the rows of the same step (the driver lets
// the workers go on as soon as it has sent the weights). They are the driver's evaluation points: the
// starting weights of a run that starts at iteration 0, and every `every` iterations before the end.
// By default, none.
struct EvaluationHolds {
  bool start = false;        // the starting weights are scored (the driver does so when it starts at 0)
  std::uint64_t every = 0;   // evaluation.frequency; 0: none after the start
  std::uint64_t offset = 0;  // a version minus the run's iteration (a resumed run's steps before)
  std::uint64_t first = 0;   // the iteration the run starts at
  std::uint64_t end = 0;     // training.iterations: the final evaluation comes after the last step

  bool at(std::uint64_t version) const {
    if (version < offset) return false;
    const std::uint64_t iteration = version - offset;
    if (iteration == first) return start;
    return every > 0 && iteration > first && iteration < end && iteration % every == 0;
  }
};

struct EmbeddingShardSetup {
  std::uint32_t index = 0;
  std::uint32_t count = 1;
  std::vector<EmbeddingTableSettings> tables;  // every table of the model, in field order
  TableOptimizerChoice optimizer;
  OptimizerSection run_optimizer;  // lazy Adam follows its Adam.v1 settings
  TrainingMode mode = TrainingMode::sync;
  std::uint32_t workers = 1;  // sync: each step sums the pushes of workers 0 .. workers - 1
  std::uint64_t version = 0;  // steps taken before this run
  EvaluationHolds holds;      // sync
  // Sync: the versions whose step waits until a checkpoint has read this shard's state at that version
  // (table_state_atom), the driver's checkpoint points; `start` is never one.
  EvaluationHolds checkpoint_holds;
  // training.save_best: the rows of the best evaluation are kept (a copy of every row's values), and a sync
  // evaluation's step is held until the evaluation is scored, not only pulled, so they are that step's.
  bool keeps_best = false;
  // Sync with backup workers: each step sums the rows of the workers whose gradients the dense server's
  // step took ("stepworkers"); the others' pushes for it are dropped, as their gradients were.
  bool told_step_workers = false;
  // Sync with cluster.pipeline: a worker computes a step from the weights a version before it, so a pull
  // one version behind is answered with the rows as they were before the last step.
  bool pipelined = false;
  // A resumed run's rows and row state: this shard's keys of each table, in field order; empty: none.
  std::vector<TableState> restore;
};

// Fails when the tables' optimizer cannot be built from the run's settings.
Result<EmbeddingShardActor> spawn_embedding_shard(caf::actor_system& system, const EmbeddingShardSetup& setup);

}  // namespace psgrad
