// How much memory embedding table rows take once touched, so that a process can refuse a share of the
// tables its machine cannot hold before it allocates any of it.
#pragma once

#include <cstdint>

#include "model/table_layout.hpp"
#include "model/table_optimizer.hpp"

namespace psgrad {

// How many of the keys 0 .. rows - 1 the shard `index` of `shards` holds (key % shards == index).
std::uint64_t share_rows(std::uint64_t rows, std::uint32_t shards, std::uint32_t index);

// The bytes one held row of `width` takes: its floats, its optimizer state, and its entry in the
// table's key index.
double row_bytes(std::uint64_t width, TableOptimizerKind optimizer);

// The bytes shard `index` of `shards` takes when every key it owns has been touched: the most it can
// come to, since rows are made only by gradients and never freed during a run.
double table_share_bytes(const TableLayout& layout, std::uint32_t shards, std::uint32_t index,
                         TableOptimizerKind optimizer);

}  // namespace psgrad
