// A table's rows with their row optimizer's state, by key: what a checkpoint keeps of a table (or of one
// shard's part of it), read out of and restored into an EmbeddingTable, and re-split by key % shards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/embedding_table.hpp"
#include "model/result.hpp"
#include "model/row_optimizer.hpp"

namespace psgrad {

struct TableState {
  std::uint64_t width = 0;           // floats a row
  std::uint64_t state_width = 0;     // the row optimizer's floats a row
  std::vector<std::uint64_t> keys;   // sorted, unique: the keys with a row, and no other
  std::vector<float> rows;           // keys x width
  std::vector<float> state;          // keys x state_width
  std::vector<std::uint64_t> steps;  // per key, the optimizer's count (lazy Adam's t; 0 for Adagrad)

  std::size_t size() const { return keys.size(); }
};

// Every row of table with its state in optimizer, in key order.
TableState read_table_state(const EmbeddingTable& table, const RowOptimizer& optimizer);

// Why state is not self-consistent (sizes that do not match its keys, keys out of order); empty when it is.
std::optional<std::string> table_state_problem(const TableState& state);

// Makes state's rows in an empty table and gives optimizer their state. An error when the widths are not
// the table's and optimizer's, or the table has rows already.
Status restore_table_state(EmbeddingTable& table, RowOptimizer& optimizer, const TableState& state);

// The rows k % count == index of parts, however they were split (each part consistent, no key in two),
// joined in key order.
Result<TableState> resplit_table_state(const std::vector<const TableState*>& parts, std::uint64_t index,
                                       std::uint64_t count);

}  // namespace psgrad
