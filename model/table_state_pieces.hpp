// Cuts one shard's part of every table into pieces no bigger than a bound, and joins them back: a
// resumed checkpoint's rows reach a table shard process in messages of bounded size.
#pragma once

#include <cstdint>
#include <vector>

#include "model/result.hpp"
#include "model/table_state.hpp"

namespace psgrad {

// Pieces of at most max_words 4-byte words each (a row's floats and state, 2 a key, 2 a step count),
// every piece holding every table (most of them empty), rows in key order: tables[t]'s rows are piece 0's
// table t, then piece 1's, and so on. A row bigger than max_words gets a piece of its own; tables with
// no rows give one piece of empty tables.
std::vector<std::vector<TableState>> cut_table_states(const std::vector<TableState>& tables,
                                                      std::uint64_t max_words);

// Appends a piece's rows to `joined` (empty: takes the piece's tables). An error when the piece has
// another number of tables or widths, or a key not after the rows before it.
Status append_table_states(std::vector<TableState>& joined, std::vector<TableState> piece);

}  // namespace psgrad
