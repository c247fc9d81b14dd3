// Whether a sparse checkpoint fits the run about to continue from it: every part is checked against the
// run before anything is spawned, so a misfit is one line naming the field, not a fault mid-run.
#pragma once

#include <string>

#include "actors/training_job.hpp"
#include "model/result.hpp"
#include "model/sparse_checkpoint.hpp"
#include "model/sparse_dataset.hpp"
#include "model/sparse_model.hpp"

namespace psgrad {

// row_optimizer: the name of the row optimizer this run's tables step with.
Status check_sparse_resume(const SparseCheckpoint& checkpoint, const TrainingJob& job, const SparseModel& model,
                           const SparseDataset& train, const std::string& row_optimizer);

}  // namespace psgrad
