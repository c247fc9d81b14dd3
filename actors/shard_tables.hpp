// One table shard's rows of every table and their row optimizers, and the checks that a pull or push
// fits them: plain state, no actors (actors/embedding_shard.cpp drives it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/embedding_table.hpp"
#include "model/checkpoint_tables.hpp"
#include "model/result.hpp"
#include "model/row_optimizer.hpp"
#include "model/table_optimizer.hpp"
#include "payloads/sparse_messages.hpp"

namespace psgrad {

class ShardTables {
 public:
  // Shard `index` of `count`, holding the keys k % count == index of every table in `tables`.
  static Result<ShardTables> make(std::uint32_t index, std::uint32_t count,
                                  const std::vector<EmbeddingTableSettings>& tables,
                                  const TableOptimizerChoice& choice, const OptimizerSection& run_optimizer);

  // This shard's part of every table with their row optimizers' state, for a checkpoint.
  ShardTablesState state(std::uint64_t version) const;
  // Restores a checkpoint's rows (this shard's keys of each table, in table order) into the empty tables;
  // an error names the table that does not fit.
  Status restore(const std::vector<TableState>& tables);

  std::size_t table_count() const { return tables_.size(); }
  double grad_clip() const { return grad_clip_; }

  // Why a pull or push does not fit this shard: a table it has not, keys out of order or held by another
  // shard, rows of another width, squares missing (async pushes carry one per table). Empty when it fits.
  std::optional<std::string> check(const RowPull& pull) const;
  std::optional<std::string> check(const RowPush& push, bool with_squares) const;

  // The rows of a pull's keys, tables in the pull's order. Read only: a key no gradient has touched gets
  // the row it would be made with, and no row is made.
  PulledRows rows(const RowPull& pull, std::uint64_t version) const;
  // Every row this shard holds, per table in key order.
  PulledRows all_rows(std::uint64_t version) const;

  // One optimizer step of a table's rows; clipped by sqrt(total_squares) when the optimizer clips.
  Status apply(std::uint32_t table, const SparseRows& gradient, double total_squares);

 private:
  ShardTables(std::uint32_t index, std::uint32_t count) : index_(index), count_(count) {}
  std::optional<std::string> check_keys(std::uint32_t table, const std::vector<std::uint64_t>& keys) const;

  std::uint32_t index_;
  std::uint32_t count_;
  double grad_clip_ = 0.0;
  std::vector<EmbeddingTable> tables_;
  std::vector<std::unique_ptr<RowOptimizer>> optimizers_;
};

}  // namespace psgrad
