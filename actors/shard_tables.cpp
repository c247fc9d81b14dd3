#include "actors/shard_tables.hpp"

#include <fmt/format.h>

namespace psgrad {

namespace {

// Entries name ascending tables, each at most once.
template <class Entry>
std::optional<std::string> check_table_order(const std::vector<Entry>& entries, std::size_t tables) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].table >= tables)
      return fmt::format("table {}, but there are {} tables", entries[i].table, tables);
    if (i > 0 && entries[i].table <= entries[i - 1].table)
      return fmt::format("table {} after table {}: tables must be ascending, each once", entries[i].table,
                         entries[i - 1].table);
  }
  return std::nullopt;
}

}  // namespace

Result<ShardTables> ShardTables::make(std::uint32_t index, std::uint32_t count,
                                      const std::vector<EmbeddingTableSettings>& tables,
                                      const TableOptimizerChoice& choice, const OptimizerSection& run_optimizer) {
  if (count == 0 || index >= count) return Error{fmt::format("table shard {} of {}", index, count)};
  auto clip = table_grad_clip(choice, run_optimizer);
  if (!clip) return Error{clip.error()};
  ShardTables shard(index, count);
  shard.grad_clip_ = *clip;
  for (const auto& settings : tables) {
    auto optimizer = build_row_optimizer(choice, run_optimizer, settings.width);
    if (!optimizer) return Error{optimizer.error()};
    shard.tables_.emplace_back(settings);
    shard.optimizers_.push_back(std::move(optimizer).value());
  }
  return shard;
}

std::optional<std::string> ShardTables::check_keys(std::uint32_t table, const std::vector<std::uint64_t>& keys) const {
  const auto rows = tables_[table].key_limit();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (rows != 0 && keys[i] >= rows)
      return fmt::format("table {}: key {} is beyond its {} rows", table, keys[i], rows);
    if (i > 0 && keys[i] <= keys[i - 1])
      return fmt::format("table {}: key {} follows key {}: keys must be sorted and unique", table, keys[i],
                         keys[i - 1]);
    if (count_ > 1 && keys[i] % count_ != index_)  // a division a key, spared when one shard holds all
      return fmt::format("table {}: key {} belongs to shard {}, not to shard {} of {}", table, keys[i],
                         keys[i] % count_, index_, count_);
  }
  return std::nullopt;
}

std::optional<std::string> ShardTables::check(const RowPull& pull) const {
  if (auto problem = check_table_order(pull.tables, tables_.size())) return problem;
  for (const auto& entry : pull.tables)
    if (auto problem = check_keys(entry.table, entry.keys)) return problem;
  return std::nullopt;
}

std::optional<std::string> ShardTables::check(const RowPush& push, bool with_squares) const {
  if (auto problem = check_table_order(push.tables, tables_.size())) return problem;
  if (with_squares ? push.squares.size() != push.tables.size() : !push.squares.empty())
    return fmt::format("{} sums of squares for {} tables, where {} were expected", push.squares.size(),
                       push.tables.size(), with_squares ? push.tables.size() : 0);
  for (const auto& entry : push.tables) {
    const auto& rows = entry.rows;
    const std::size_t width = tables_[entry.table].width();
    if (rows.width != width || rows.values.size() != rows.keys.size() * width)
      return fmt::format("table {}: {} floats for {} keys of width {}, where rows are {} wide", entry.table,
                         rows.values.size(), rows.keys.size(), rows.width, width);
    if (auto problem = check_keys(entry.table, rows.keys)) return problem;
  }
  return std::nullopt;
}

PulledRows ShardTables::rows(const RowPull& pull, std::uint64_t version) const {
  PulledRows answer;
  answer.version = version;
  answer.through_shared_memory = pull.answer_through_shared_memory;
  std::vector<const float*> found;  // per key of a table, its row (null: never touched)
  for (const auto& entry : pull.tables) {
    const auto& table = tables_[entry.table];
    const std::size_t width = table.width();
    SparseRows rows;
    rows.keys = entry.keys;
    rows.width = width;
    // Appended row by row rather than zeroed first and then overwritten: the answer is most of a pull's
    // cost. The rows are scattered over a table far bigger than the cache, so every key's row is found
    // first and each is copied while the one a few keys on is fetched.
    found.clear();
    for (const auto key : rows.keys) found.push_back(table.find(key));
    rows.values.reserve(rows.keys.size() * width);
    constexpr std::size_t kAhead = 4;
    for (std::size_t i = 0; i < found.size(); ++i) {
      if (i + kAhead < found.size() && found[i + kAhead] != nullptr)
        for (std::size_t f = 0; f < width; f += 16) __builtin_prefetch(found[i + kAhead] + f);
      if (const float* row = found[i]) {
        rows.values.insert(rows.values.end(), row, row + width);
      } else {
        rows.values.resize(rows.values.size() + width);
        table.initial_row(rows.keys[i], rows.values.data() + rows.values.size() - width);
      }
    }
    answer.tables.push_back(TableRows{entry.table, std::move(rows)});
  }
  return answer;
}

PulledRows ShardTables::all_rows(std::uint64_t version) const {
  RowPull everything;
  for (std::size_t t = 0; t < tables_.size(); ++t)
    everything.tables.push_back(TableKeys{static_cast<std::uint32_t>(t), tables_[t].keys()});
  return rows(everything, version);
}

ShardTablesState ShardTables::state(std::uint64_t version) const {
  ShardTablesState state{index_, count_, version, {}};
  for (std::size_t t = 0; t < tables_.size(); ++t) state.tables.push_back(read_table_state(tables_[t], *optimizers_[t]));
  return state;
}

Status ShardTables::restore(const std::vector<TableState>& tables) {
  if (tables.size() != tables_.size())
    return Error{fmt::format("the checkpoint has {} tables, the model {}", tables.size(), tables_.size())};
  for (std::size_t t = 0; t < tables.size(); ++t) {
    if (auto problem = check_keys(static_cast<std::uint32_t>(t), tables[t].keys)) return Error{*problem};
    if (auto restored = restore_table_state(tables_[t], *optimizers_[t], tables[t]); !restored)
      return Error{fmt::format("table {}: {}", t, restored.error())};
  }
  return success();
}

Status ShardTables::apply(std::uint32_t table, const SparseRows& gradient, double total_squares) {
  return tables_.at(table).apply(gradient, *optimizers_.at(table), total_squares);
}

}  // namespace psgrad
