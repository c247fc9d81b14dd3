#include "model/table_memory.hpp"

namespace psgrad {

std::uint64_t share_rows(std::uint64_t rows, std::uint32_t shards, std::uint32_t index) {
  if (shards == 0 || index >= shards) return 0;
  return rows / shards + (index < rows % shards ? 1 : 0);
}

double row_bytes(std::uint64_t width, TableOptimizerKind optimizer) {
  // An unordered_map node (key, slot, next pointer, cached hash) and its bucket pointer.
  constexpr double index_entry = 40;
  const double floats = static_cast<double>(width) * sizeof(float);
  switch (optimizer) {
    case TableOptimizerKind::lazy_adam:
      return floats * 3 + sizeof(std::uint64_t) + index_entry;  // row, two moments, step count
    case TableOptimizerKind::adagrad:
      return floats * 2 + 1.0 / 8 + index_entry;  // row, accumulator, a "stepped" bit
  }
  return floats + index_entry;
}

double table_share_bytes(const TableLayout& layout, std::uint32_t shards, std::uint32_t index,
                         TableOptimizerKind optimizer) {
  double bytes = 0;
  for (const auto& table : layout.tables)
    bytes += static_cast<double>(share_rows(table.rows, shards, index)) * row_bytes(table.width, optimizer);
  return bytes;
}

}  // namespace psgrad
