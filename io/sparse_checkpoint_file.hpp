// Sparse checkpoint files: the dense part as a checkpoint file holds it, then each table shard's part as
// a section of its own with its own checksum (so a shard process can write its part on its own), all
// behind a checksum of the whole and written atomically. Reading checks every count and checksum, and
// that the parts make whole tables at the dense part's step.
#pragma once

#include <string>
#include <string_view>

#include "model/result.hpp"
#include "model/sparse_checkpoint.hpp"

namespace psgrad {

Status write_sparse_checkpoint(const std::string& path, const SparseCheckpoint& checkpoint);
// Errors name the file and the fault ("truncated", "not a psgrad sparse checkpoint", "table shard 1: ...").
Result<SparseCheckpoint> read_sparse_checkpoint(const std::string& path);

// One shard's section: its index and count, step, and every table's keys, rows and row optimizer state.
std::string encode_shard_tables(const ShardTablesState& shard);
// `where` names the section in errors ("runs/a.ckpt: table shard 1").
Result<ShardTablesState> decode_shard_tables(std::string_view bytes, const std::string& where);

// Whether the file at path is a sparse checkpoint (by its first bytes), for commands that take either.
bool is_sparse_checkpoint(const std::string& path);

}  // namespace psgrad
