// Sizes a config's embedding tables at their largest and compares them with the machine's memory.
#include "apps/table_memory_check.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "io/machine_memory.hpp"
#include "model/table_graph.hpp"
#include "model/table_memory.hpp"

namespace psgrad {

Status check_tables_fit(const Config& config, std::size_t shards_here, std::uint64_t machine_bytes,
                        const std::string& holder) {
  if (!model_has_tables(config.model)) return success();
  auto front = model_table_front(config.model);
  if (!front) return Error{fmt::format("{}: model: {}", config.source, front.error())};
  std::vector<std::string> id_columns;
  for (const auto& column : config.data.columns)
    if (column.kind != ColumnKind::number) id_columns.push_back(column.name);
  std::vector<TableSize> tables;
  for (std::size_t f = 0; f < front->fields.size(); ++f)
    tables.push_back({f < id_columns.size() ? id_columns[f] : fmt::format("field {}", f), front->fields[f].rows,
                      front->fields[f].width});
  const bool adagrad = config.tables.optimizer == "adagrad";
  const auto state = kept_floats_per_value(adagrad, config.training.save_best);
  const auto shards = std::max<std::size_t>(1, config.cluster.servers);
  const double per_shard = shard_table_bytes(tables, state, shards);
  const double here = per_shard * static_cast<double>(std::min(shards_here, shards));
  if (here <= static_cast<double>(machine_bytes)) return success();
  std::vector<std::string> sizes;
  for (const auto& table : tables)
    sizes.push_back(fmt::format("{} {} rows x {} floats", table.field, table.rows, table.width));
  return Error{fmt::format(
      "{}: the embedding tables can grow to {} ({}; x {} with {}'s state{}, + {:g} bytes a row) over {} shard{}: {} a "
      "shard, {} in this process, but {} {}; lower model.embedding_rows or "
      "model.embedding_widths",
      config.source, memory_size_text(shard_table_bytes(tables, state, 1)), fmt::join(sizes, ", "), 1 + state,
      adagrad ? "Adagrad" : "lazy Adam", config.training.save_best ? " and the best evaluation's copy" : "",
      kTableRowOverheadBytes, shards, shards == 1 ? "" : "s",
      memory_size_text(per_shard), memory_size_text(here), holder, memory_size_text(static_cast<double>(machine_bytes)))};
}

Status check_tables_fit_machine(const Config& config, std::size_t shards_here) {
  const auto memory = memory_limit();
  if (!memory) return success();
  return check_tables_fit(config, shards_here, memory->bytes, memory->holder);
}

}  // namespace psgrad
