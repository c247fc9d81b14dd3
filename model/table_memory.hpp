// The most memory embedding tables can take: every row a table's hash can reach, with its optimizer
// state, split over the shards that hold them; a table grows to this as training touches its rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace psgrad {

// Besides its floats, a row costs its hash-map buckets (model/row_slots.hpp: 16 bytes of key and slot,
// the map a quarter to half full, so 32 to 64 bytes a row) and the optimizer's per-row step count or
// flag: 64 holds but just after the map doubles, when it is 72.
inline constexpr double kTableRowOverheadBytes = 64;

struct TableSize {
  std::string field;      // the column it embeds
  std::uint64_t rows = 0;  // nV
  std::size_t width = 0;   // nO
};

// Floats each row value keeps besides itself: lazy Adam's two moments, Adagrad's one sum.
inline std::size_t optimizer_state_per_value(bool adagrad) { return adagrad ? 1 : 2; }

// The floats each row value keeps besides itself in a run: the optimizer's state, and with
// training.save_best the copy the shard keeps of the best evaluation's rows.
inline std::size_t kept_floats_per_value(bool adagrad, bool keeps_best) {
  return optimizer_state_per_value(adagrad) + (keeps_best ? 1 : 0);
}

// The most bytes one table can take: rows x (width floats x (1 + state) + overhead). A double, so sizes
// past 64 bits still compare.
inline double table_bytes(const TableSize& table, std::size_t state_per_value) {
  const double row = static_cast<double>(table.width) * 4.0 * static_cast<double>(1 + state_per_value) +
                     kTableRowOverheadBytes;
  return static_cast<double>(table.rows) * row;
}

// The most one of `shards` shards holds of every table: keys go to shard key % shards, so each holds
// at most ceil(rows / shards) rows of each table.
inline double shard_table_bytes(const std::vector<TableSize>& tables, std::size_t state_per_value,
                                std::size_t shards) {
  double bytes = 0;
  for (const auto& table : tables) {
    TableSize share = table;
    share.rows = (table.rows + shards - 1) / shards;
    bytes += table_bytes(share, state_per_value);
  }
  return bytes;
}

}  // namespace psgrad
