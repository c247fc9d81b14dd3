// Training a sparse model with every actor in this process: the dense part on one parameter server, each
// embedding table on cluster.servers table shards, SparseWorkers, the sparse evaluator, and the same
// driver, schedules, progress records and summary as dense runs.
#pragma once

#include <memory>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/evaluator.hpp"
#include "actors/training_driver.hpp"
#include "actors/training_job.hpp"
#include "model/sparse_dataset.hpp"
#include "model/sparse_rows.hpp"
#include "model/table_optimizer.hpp"

namespace psgrad {

struct SparseTrainingSummary {
  TrainingSummary run;             // final_weights: the dense part's
  std::vector<SparseRows> tables;  // per field, every row its table holds at the end, in key order
};

// job.model names a sparse architecture (model/sparse_registry.hpp) and its settings; the data's id
// fields are its fields, in order (numeric columns are not read). The tables step with lazy Adam on the
// run's Adam.v1 settings unless `tables` chooses Adagrad. Not offered yet, and refused with a one-line
// error: cluster.pipeline, backup workers, checkpoints.
Result<SparseTrainingSummary> train_sparse_in_process(caf::actor_system& system, const TrainingJob& job,
                                                      std::shared_ptr<const SparseDataset> train,
                                                      std::shared_ptr<const SparseDataset> dev,
                                                      ReportCallback on_report,
                                                      const TableOptimizerChoice& tables = {},
                                                      DriverHooks hooks = {});

}  // namespace psgrad
