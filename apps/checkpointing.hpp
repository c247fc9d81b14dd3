// Wires the driver's checkpoints to files, and loads a checkpoint to resume from.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "apps/run_setup.hpp"
#include "model/checkpoint.hpp"

namespace psgrad {

// Writes each checkpoint to training.checkpoint_path (atomically); empty when no path is set.
std::function<void(const TrainingCheckpoint&)> checkpoint_writer(const PreparedRun& run);

// Nothing when path is empty; else the checkpoint, checked to belong to this run's model.
Result<std::optional<TrainingCheckpoint>> load_resume(const std::string& path, const PreparedRun& run);

}  // namespace psgrad
