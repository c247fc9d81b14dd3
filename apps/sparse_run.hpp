// `psgrad train` for a model with embedding tables, every actor in this process: the sparse data, the
// tables' memory check, train_sparse_in_process with the dense runs' output, signals and summary.
#pragma once

#include <cstdint>
#include <optional>

#include "actors/sparse_training.hpp"
#include "apps/run_setup.hpp"
#include "apps/sparse_data.hpp"
#include "apps/train_command.hpp"
#include "model/checkpoint_tables.hpp"

namespace psgrad {

// Whether the options' config names a model with embedding tables, or, without --config, --resume names
// a sparse run's checkpoint. A config that does not load is not one: the dense path then reports why.
bool names_sparse_model(const RunOptions& options, const std::string& resume);

// Runs it and returns the process exit code; what sparse runs do not offer yet (the pipeline, backup
// workers, patience) is refused in one line before training. training.checkpoint_path
// and --resume work as for dense runs (apps/checkpointing.hpp).
int run_sparse_train(const TrainOptions& options);

// A sparse run's config, data and output, opened as for `train` (the refusals of what sparse runs do not
// offer included); with tables_here, refused when every table shard could outgrow this machine.
struct SparseRun {
  PreparedRun run;
  SparseDataSplit data;
  std::optional<TrainingCheckpoint> resume;  // --resume's checkpoint, checked against the run
  std::uint64_t table_floats = 0;          // every table's nV x width
};
Result<SparseRun> prepare_sparse_run(const TrainOptions& options, bool tables_here);
// The same for a config already read (the Python module's, whose data are columns it wrote to files).
Result<SparseRun> prepare_sparse_run_with_config(const TrainOptions& options, Config config, bool tables_here);

// Writes the trained model file: config, dense weights, each table's touched rows, columns and classes.
Status save_sparse_model(const std::string& path, const SparseRun& sparse, const SparseTrainingSummary& summary);

// The dense runs' ending (finish_run), without their best weights; the exit code.
int finish_sparse_run(const Result<SparseTrainingSummary>& outcome, const SparseRun& sparse,
                      const TrainOptions& options);

}  // namespace psgrad
