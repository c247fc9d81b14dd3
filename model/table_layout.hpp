// The shape of a sparse model's embedding tables (rows, width, hash and initial-value seeds per field)
// and of its dense part, which every process of a run must agree on before it holds or pulls a row.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace psgrad {

class SparseModel;

struct TableShape {
  std::uint64_t rows = 0;       // nV
  std::uint64_t width = 0;      // nO
  std::uint64_t hash_seed = 0;  // the field's HashEmbed seed
  std::uint64_t init_seed = 0;  // the seed its rows' first values are drawn from
};

struct TableLayout {
  std::uint64_t dense_hash = 0;  // the dense part's ParameterLayout::hash()
  std::vector<TableShape> tables;  // in field order

  // One number for both: what a worker's JoinRequest carries as its layout hash.
  std::uint64_t hash() const;
};

// The layout of `model`'s tables in a run seeded with run_seed.
TableLayout table_layout(const SparseModel& model, std::uint64_t run_seed);

// What differs between a peer's layout and ours, in words ("table 1 has 4096 rows, the server's 5000");
// nothing when they agree.
std::optional<std::string> layout_difference(const TableLayout& theirs, const TableLayout& ours);

}  // namespace psgrad
