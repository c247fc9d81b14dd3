// Checkpoint files: written atomically (temporary file, fsync, rename) with a checksum, read back with
// the checksum and every field checked, so neither a crash mid-write nor a flipped byte loads as
// something else.
#pragma once

#include <string>

#include "model/checkpoint.hpp"
#include "model/result.hpp"

namespace psgrad {

Status write_checkpoint(const std::string& path, const TrainingCheckpoint& checkpoint);
// Errors name the file and the fault ("truncated", "not a psgrad checkpoint", ...).
Result<TrainingCheckpoint> read_checkpoint(const std::string& path);

}  // namespace psgrad
