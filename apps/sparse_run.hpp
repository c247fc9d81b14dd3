// `psgrad train` for a model with embedding tables, every actor in this process: the sparse data, the
// tables' memory check, train_sparse_in_process with the dense runs' output, signals and summary.
#pragma once

#include "apps/train_command.hpp"

namespace psgrad {

// Whether the options' config names a model with embedding tables. A config that does not load is not
// one: the dense path then reports why.
bool names_sparse_model(const RunOptions& options);

// Runs it and returns the process exit code; what sparse runs do not offer yet (--processes, --resume,
// checkpoints, the pipeline, backup workers, patience) is refused in one line before training.
int run_sparse_train(const TrainOptions& options);

}  // namespace psgrad
