// Wires the driver's checkpoints to files, and loads a checkpoint to resume from.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "actors/resume_check.hpp"
#include "apps/run_setup.hpp"
#include "model/checkpoint.hpp"
#include "model/sparse_model.hpp"

namespace psgrad {

// Where a checkpoint of a run goes and how its write is reported, for every model's checkpoints: to
// training.checkpoint_path, else (only once a signal came) to interrupted_checkpoint_path(run).
class CheckpointDestination {
 public:
  CheckpointDestination(const PreparedRun& run, std::shared_ptr<const std::atomic<int>> interrupt);
  // Whether any checkpoint can be written: a path is set, or a signal may come.
  bool any() const { return !configured_.empty() || interrupt_ != nullptr; }
  // The path this checkpoint goes to now (its folder made), or nothing.
  std::optional<std::string> path() const;
  // A failed write is always said; a routine one is a note that --quiet drops. `detail` follows the path.
  void report(const Status& written, std::uint64_t iteration, const std::string& path,
              const std::string& detail = {}) const;

 private:
  std::string configured_;
  std::string on_interrupt_;
  std::shared_ptr<const std::atomic<int>> interrupt_;
  std::shared_ptr<RunOutput> output_;
};

// Writes each checkpoint to training.checkpoint_path (atomically), with the run's config text and
// training data when the checkpoint does not carry them, and tells the run's output whether it was
// written; with tables, with the share of the tables' nV x width floats (table_floats) its touched rows
// hold. Without a path, only a run stopped by a signal is checkpointed, to
// interrupted_checkpoint_path(run). Empty when neither can happen.
std::function<void(const TrainingCheckpoint&)> checkpoint_writer(const PreparedRun& run,
                                                                 std::shared_ptr<const std::atomic<int>> interrupt = {},
                                                                 std::uint64_t table_floats = 0);

// Every table's nV x width: the floats its rows would take were every row its hash reaches made.
std::uint64_t table_floats(const SparseModel& model);

// True when the run has no training.checkpoint_path: then the writers above keep only a signalled run's
// state, and the driver gathers a checkpoint only once a signal came (DriverHooks).
inline bool checkpoints_on_signal_only(const PreparedRun& run) { return run.config.training.checkpoint_path.empty(); }

// Where a run stopped by a signal leaves its checkpoint: training.checkpoint_path, else beside the
// run's metrics file (runs/<run>-interrupted.ckpt).
std::string interrupted_checkpoint_path(const PreparedRun& run);

// That the checkpoint at path was written by a run of config's training.seed and cluster.mode, which its
// streams and iteration count follow; else an error saying how to resume it.
Status same_seed_and_mode(const std::string& path, const TrainingCheckpoint& checkpoint, const Config& config);

// Nothing when path is empty; else the checkpoint, checked to come from a run of this config's seed and
// mode and to fit the model (check_resume): its layout, tables, optimizers and, when it says which
// (format version 3 on), its training data. Without `model`, the run's dense model and data.
Result<std::optional<TrainingCheckpoint>> load_resume(const std::string& path, const PreparedRun& run,
                                                      const std::optional<ResumingModel>& model = std::nullopt);

}  // namespace psgrad
