// Checkpoint files: written atomically (temporary file, fsync, rename), read back with every field
// checked, so a crash mid-write never leaves a file that loads as something else.
#pragma once

#include <string>

#include "model/checkpoint.hpp"
#include "model/result.hpp"

namespace psgrad {

Status write_checkpoint(const std::string& path, const TrainingCheckpoint& checkpoint);
// Errors name the file and the fault ("truncated", "not a psgrad checkpoint", ...).
Result<TrainingCheckpoint> read_checkpoint(const std::string& path);

}  // namespace psgrad
