// A sparse embedding table: rows keyed by uint64, made on first touch with uniform(low, high) values
// drawn from a generator seeded by (init_seed, key) alone, so a row's first value is the same whatever
// order keys arrive in and however the keys are spread over tables (parameter-server shards).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "model/result.hpp"
#include "model/row_blocks.hpp"
#include "model/row_optimizer.hpp"
#include "model/row_slots.hpp"
#include "model/sparse_rows.hpp"

namespace psgrad {

struct EmbeddingTableSettings {
  std::size_t width = 0;
  std::uint64_t init_seed = 0;
  // HashEmbed's nV: every key is below it, so a holder refuses others instead of growing for them
  // (0: any key, for a table read from a file).
  std::uint64_t rows = 0;
  // Thinc's uniform_init bounds; the values themselves come from psgrad's generator, not numpy's.
  float low = -0.1f;
  float high = 0.1f;
};

// The init_seed of field column's table in a run seeded with run_seed.
std::uint64_t embedding_init_seed(std::uint64_t run_seed, std::size_t column);

// The sum of squares of a gradient block, exact and then rounded once (model/exact_squares.hpp): what a
// holder of a whole table's gradient passes to every shard's apply so each clips by the norm of all of it,
// and what shards that each hold part of a summed gradient get by adding their ExactSquares.
double gradient_squares(const SparseRows& gradient);

class EmbeddingTable {
 public:
  explicit EmbeddingTable(const EmbeddingTableSettings& settings);

  std::size_t width() const { return settings_.width; }
  std::uint64_t key_limit() const { return settings_.rows; }  // 0: none
  std::size_t size() const { return slots_.size(); }  // rows made so far
  bool contains(std::uint64_t key) const { return slots_.find(key) != RowSlots::kNone; }
  // An existing row, or null for a key never touched (no row is made).
  const float* find(std::uint64_t key) const;
  // Every key with a row, ascending.
  std::vector<std::uint64_t> keys() const;
  // The slot a row's optimizer state is kept under; nothing for a key never touched.
  std::optional<std::size_t> slot(std::uint64_t key) const;

  // The value key's row has when first touched.
  void initial_row(std::uint64_t key, float* out) const;

  // Copies of the rows of keys (sorted and unique), making rows touched for the first time.
  Result<SparseRows> pull(const std::vector<std::uint64_t>& keys);

  // One optimizer step on the rows gradient names (made first if new); no other row is read or
  // written. The gradient is clipped by the norm sqrt(total_squares), when given (a shard holding part
  // of a table's gradient), else by its own norm.
  Status apply(const SparseRows& gradient, RowOptimizer& optimizer, std::optional<double> total_squares = {});

  // Makes key's row with the given values (a checkpoint's) and returns its slot; an error when the key
  // has a row already.
  Result<std::size_t> restore_row(std::uint64_t key, const float* values);

 private:
  std::size_t slot_for(std::uint64_t key);  // makes the row when new

  EmbeddingTableSettings settings_;
  RowSlots slots_;
  RowBlocks rows_;  // a row per slot, in first-touch order
  std::vector<std::size_t> apply_slots_;  // apply's slots of its gradient's keys, kept to spare an allocation
};

}  // namespace psgrad
