// Checkpoint files: written atomically (temporary file, fsync, rename) with a checksum, read back with
// the checksum and every field checked, so neither a crash mid-write nor a flipped byte loads as
// something else.
#pragma once

#include <string>
#include <string_view>

#include "model/checkpoint.hpp"
#include "model/result.hpp"

namespace psgrad {

Status write_checkpoint(const std::string& path, const TrainingCheckpoint& checkpoint);
// Errors name the file and the fault ("truncated", "not a psgrad checkpoint", ...).
Result<TrainingCheckpoint> read_checkpoint(const std::string& path);

// The bytes write_checkpoint writes, and their reading, for files that hold a checkpoint as one part
// (io/sparse_checkpoint_file.hpp); path names the file in errors.
std::string encode_checkpoint(const TrainingCheckpoint& checkpoint);
Result<TrainingCheckpoint> decode_checkpoint(std::string_view bytes, const std::string& path);

}  // namespace psgrad
