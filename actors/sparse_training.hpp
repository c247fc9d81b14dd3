// Training a model with embedding tables with every actor in this process: the dense part on one parameter
// server, each table on cluster.servers table shards, and the dense runs' workers, evaluator, driver,
// schedules, progress records and summary.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/evaluator.hpp"
#include "actors/training_driver.hpp"
#include "actors/training_job.hpp"
#include "model/checkpoint_tables.hpp"
#include "model/sparse_dataset.hpp"
#include "model/sparse_rows.hpp"
#include "model/table_optimizer.hpp"

namespace psgrad {

struct SparseTrainingSummary {
  TrainingSummary run;             // final_weights: the dense part's
  std::vector<SparseRows> tables;  // per field, every row its table holds at the end, in key order
};

// A sparse run's checkpoints, and the checkpoint it continues from.
struct SparseCheckpointing {
  // Receives each checkpoint the driver takes (training.checkpoint_every, an interrupt, the end), in the
  // order taken, with the tables as every shard held them at its step (sync: exactly that step) and the
  // training data's fingerprint; empty: no checkpoints.
  std::function<void(const TrainingCheckpoint&)> on_checkpoint;
  bool checkpoints_on_signal_only = false;  // see DriverHooks::checkpoints_on_signal_only
  std::string config;  // the run's config text, given to each checkpoint (so the tables are never copied for it)
  // Continue from here: the dense part, the workers' streams, and the tables re-split over this run's
  // cluster.servers. Sync runs continue bit for bit as the run that wrote it would have.
  std::optional<TrainingCheckpoint> resume;
};

// job.model names an architecture with embedding tables (model/registry.hpp) and its settings; the data's id
// fields are its fields, in order (numeric columns are not read). The tables step with lazy Adam on the
// run's Adam.v1 settings unless `tables` chooses Adagrad. Not offered yet, and refused with a one-line
// error: cluster.pipeline, backup workers, and hooks.on_checkpoint (the tables' checkpoints come through
// `checkpointing`). A resume checkpoint that does not fit the run is refused before anything is spawned.
Result<SparseTrainingSummary> train_sparse_in_process(caf::actor_system& system, const TrainingJob& job,
                                                      std::shared_ptr<const SparseDataset> train,
                                                      std::shared_ptr<const SparseDataset> dev,
                                                      ReportCallback on_report,
                                                      const TableOptimizerChoice& tables = {},
                                                      DriverHooks hooks = {}, SparseCheckpointing checkpointing = {},
                                                      SnapshotCallback on_snapshot = {});

}  // namespace psgrad
