// Everything needed to continue a sparse run where it stopped: the dense part's checkpoint (weights,
// optimizer state, counters, workers' stream positions, config, data fingerprint) and the tables with
// their row optimizers' state, as each table shard held its part of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/checkpoint.hpp"
#include "model/result.hpp"
#include "model/table_state.hpp"

namespace psgrad {

// One table shard's part of every table: the keys k % count == index, after `version` steps.
struct ShardTablesState {
  std::uint32_t index = 0;
  std::uint32_t count = 1;
  std::uint64_t version = 0;
  std::vector<TableState> tables;  // per table, in field order
};

struct SparseCheckpoint {
  TrainingCheckpoint dense;
  std::string row_optimizer;             // RowOptimizer::name() of the tables' optimizer
  std::vector<ShardTablesState> shards;  // in index order, one per shard of the run that wrote it
};

// Why the shards' parts do not make whole tables at the dense part's version: a shard missing or twice,
// parts of another count or version, tables of other widths, a key on the wrong shard. Empty when they do.
std::optional<std::string> shard_parts_problem(const SparseCheckpoint& checkpoint);

// Shard `index` of `count`'s part of each table, re-split from the checkpoint's parts (any count).
Result<std::vector<TableState>> tables_for_shard(const SparseCheckpoint& checkpoint, std::uint32_t index,
                                                 std::uint32_t count);

// Rows of all tables held (the touched rows only) and the floats they take, rows and optimizer state.
struct TableStateSize {
  std::uint64_t rows = 0;
  std::uint64_t row_floats = 0;
  std::uint64_t state_floats = 0;
};
TableStateSize table_state_size(const SparseCheckpoint& checkpoint);

}  // namespace psgrad
