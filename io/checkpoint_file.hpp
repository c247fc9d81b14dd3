// Checkpoint files: written atomically (temporary file, fsync, rename) with a checksum, read back with
// the checksum and every field checked, so neither a crash mid-write nor a flipped byte loads as
// something else. A checkpoint with a tables part is written as the dense fields' record followed by
// each table shard's section (with its own checksum, so a shard can encode its part on its own).
#pragma once

#include <string>
#include <string_view>

#include "model/checkpoint.hpp"
#include "model/result.hpp"

namespace psgrad {

Status write_checkpoint(const std::string& path, const TrainingCheckpoint& checkpoint);
// Reads either layout; errors name the file and the fault ("truncated", "not a psgrad checkpoint",
// "table shard 1: ..."), and a tables part whose shards do not make whole tables is refused.
Result<TrainingCheckpoint> read_checkpoint(const std::string& path);

// The bytes of a checkpoint's fields without its tables, and their reading; path names the file in errors.
std::string encode_checkpoint(const TrainingCheckpoint& checkpoint);
Result<TrainingCheckpoint> decode_checkpoint(std::string_view bytes, const std::string& path);

// One shard's section: its index and count, step, and every table's keys, rows and row optimizer state.
std::string encode_shard_tables(const ShardTablesState& shard);
// `where` names the section in errors ("runs/a.ckpt: table shard 1").
Result<ShardTablesState> decode_shard_tables(std::string_view bytes, const std::string& where);

// Whether the file at path is a checkpoint with a tables part (by its first bytes), for the commands
// that pick the kind of run from a checkpoint alone.
bool checkpoint_has_tables(const std::string& path);

}  // namespace psgrad
