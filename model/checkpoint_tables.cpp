#include "model/checkpoint_tables.hpp"

#include <fmt/format.h>

namespace psgrad {

std::optional<std::string> shard_parts_problem(const TrainingCheckpoint& checkpoint) {
  if (!checkpoint.tables) return std::string("no tables part");
  const auto& shards = checkpoint.tables->shards;
  if (shards.empty()) return std::string("no table shards");
  const std::size_t tables = shards[0].tables.size();
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const auto& shard = shards[i];
    if (shard.index != i || shard.count != shards.size())
      return fmt::format("table shard part {} says it is shard {} of {}, where {} parts were written", i,
                         shard.index, shard.count, shards.size());
    if (shard.version != checkpoint.version)
      return fmt::format("table shard {} is at step {}, the dense part at step {}", i, shard.version,
                         checkpoint.version);
    if (shard.tables.size() != tables)
      return fmt::format("table shard {} has {} tables, shard 0 {}", i, shard.tables.size(), tables);
    for (std::size_t t = 0; t < tables; ++t) {
      const auto& table = shard.tables[t];
      if (auto problem = table_state_problem(table)) return fmt::format("table shard {}, table {}: {}", i, t, *problem);
      if (table.width != shards[0].tables[t].width || table.state_width != shards[0].tables[t].state_width)
        return fmt::format("table shard {}, table {}: rows of width {} with {} optimizer floats, shard 0's {} and {}",
                           i, t, table.width, table.state_width, shards[0].tables[t].width,
                           shards[0].tables[t].state_width);
      for (auto key : table.keys)
        if (key % shard.count != shard.index)
          return fmt::format("table shard {}, table {}: key {} belongs to shard {}", i, t, key, key % shard.count);
    }
  }
  return std::nullopt;
}

Result<std::vector<TableState>> tables_for_shard(const TrainingCheckpoint& checkpoint, std::uint32_t index,
                                                 std::uint32_t count) {
  if (auto problem = shard_parts_problem(checkpoint)) return Error{*problem};
  std::vector<TableState> tables;
  const auto& shards = checkpoint.tables->shards;
  for (std::size_t t = 0; t < shards[0].tables.size(); ++t) {
    std::vector<const TableState*> parts;
    for (const auto& shard : shards) parts.push_back(&shard.tables[t]);
    auto part = resplit_table_state(parts, index, count);
    if (!part) return Error{fmt::format("table {}: {}", t, part.error())};
    tables.push_back(std::move(part).value());
  }
  return tables;
}

TableStateSize table_state_size(const TrainingCheckpoint& checkpoint) {
  TableStateSize size;
  if (!checkpoint.tables) return size;
  for (const auto& shard : checkpoint.tables->shards)
    for (const auto& table : shard.tables) {
      size.rows += table.size();
      size.row_floats += table.rows.size();
      size.state_floats += table.state.size();
    }
  return size;
}

}  // namespace psgrad
