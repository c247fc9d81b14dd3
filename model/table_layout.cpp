#include "model/table_layout.hpp"

#include <fmt/format.h>

#include "model/embedding_table.hpp"
#include "model/sparse_model.hpp"

namespace psgrad {

namespace {

// FNV-1a over 64-bit words: a layout is a handful of numbers, so any fixed mixing will do.
std::uint64_t mix(std::uint64_t hash, std::uint64_t word) {
  for (int byte = 0; byte < 8; ++byte) {
    hash ^= (word >> (8 * byte)) & 0xffu;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

std::uint64_t TableLayout::hash() const {
  std::uint64_t hash = mix(0xcbf29ce484222325ull, dense_hash);
  hash = mix(hash, tables.size());
  for (const auto& table : tables)
    for (auto word : {table.rows, table.width, table.hash_seed, table.init_seed}) hash = mix(hash, word);
  return hash;
}

TableLayout table_layout(const SparseModel& model, std::uint64_t run_seed) {
  TableLayout layout;
  layout.dense_hash = model.dense().layout().hash();
  for (std::size_t f = 0; f < model.fields().size(); ++f) {
    const auto& field = model.fields()[f];
    layout.tables.push_back(TableShape{field.rows, field.width, field.seed, embedding_init_seed(run_seed, f)});
  }
  return layout;
}

std::optional<std::string> layout_difference(const TableLayout& theirs, const TableLayout& ours) {
  if (theirs.tables.size() != ours.tables.size())
    return fmt::format("{} tables (id fields), the server's {}", theirs.tables.size(), ours.tables.size());
  for (std::size_t t = 0; t < ours.tables.size(); ++t) {
    const auto& a = theirs.tables[t];
    const auto& b = ours.tables[t];
    if (a.rows != b.rows) return fmt::format("table {} has {} rows (nV), the server's {}", t, a.rows, b.rows);
    if (a.width != b.width) return fmt::format("table {} has width {} (nO), the server's {}", t, a.width, b.width);
    if (a.hash_seed != b.hash_seed)
      return fmt::format("table {} hashes with seed {}, the server's {}", t, a.hash_seed, b.hash_seed);
    if (a.init_seed != b.init_seed)
      return fmt::format("table {} draws its rows from seed {}, the server's {}", t, a.init_seed, b.init_seed);
  }
  if (theirs.dense_hash != ours.dense_hash)
    return fmt::format("the dense layout {:016x} differs from the server's {:016x}", theirs.dense_hash, ours.dense_hash);
  return std::nullopt;
}

}  // namespace psgrad
