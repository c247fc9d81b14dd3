// Wires a sparse run's checkpoints to files, and loads a sparse checkpoint to resume from.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "apps/run_setup.hpp"
#include "model/sparse_checkpoint.hpp"
#include "model/sparse_dataset.hpp"
#include "model/sparse_model.hpp"

namespace psgrad {

// Writes each checkpoint (given the run's config text through SparseCheckpointing.config) to
// training.checkpoint_path, atomically, and tells the run's output, as dense runs' checkpoint_writer
// does, with the share of the tables' nV x width floats (table_floats) its touched rows hold; without
// a path, only a run stopped by a signal is checkpointed, to interrupted_checkpoint_path(run). Empty
// when neither can happen.
std::function<void(const SparseCheckpoint&)> sparse_checkpoint_writer(const PreparedRun& run,
                                                                      std::uint64_t table_floats,
                                                                      std::shared_ptr<const std::atomic<int>> interrupt);

// Every table's nV x width: the floats its rows would take were every row its hash reaches made.
std::uint64_t table_floats(const SparseModel& model);

// Nothing when path is empty; else the sparse checkpoint, checked to come from a run of this config's
// seed and mode, and to fit its model, tables' optimizer and training data (check_sparse_resume).
Result<std::optional<SparseCheckpoint>> load_sparse_resume(const std::string& path, const PreparedRun& run,
                                                           const SparseModel& model, const SparseDataset& train);

}  // namespace psgrad
