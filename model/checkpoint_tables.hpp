// A checkpoint's tables part checked and cut: whether the shards' parts make whole tables at the
// checkpoint's step, one shard's part for any shard count, and the size of what is held.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/checkpoint.hpp"
#include "model/result.hpp"
#include "model/table_state.hpp"

namespace psgrad {

// Why the checkpoint's table shards' parts do not make whole tables at its version: no tables part, a
// shard missing or twice, parts of another count or version, tables of other widths, a key on the wrong
// shard. Empty when they do.
std::optional<std::string> shard_parts_problem(const TrainingCheckpoint& checkpoint);

// Shard `index` of `count`'s part of each table, re-split from the checkpoint's parts (any count).
Result<std::vector<TableState>> tables_for_shard(const TrainingCheckpoint& checkpoint, std::uint32_t index,
                                                 std::uint32_t count);

// Rows of all tables held (the touched rows only) and the floats they take, rows and optimizer state;
// zero without tables.
struct TableStateSize {
  std::uint64_t rows = 0;
  std::uint64_t row_floats = 0;
  std::uint64_t state_floats = 0;
};
TableStateSize table_state_size(const TrainingCheckpoint& checkpoint);

}  // namespace psgrad
