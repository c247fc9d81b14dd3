#include "model/table_state.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace psgrad {

TableState read_table_state(const EmbeddingTable& table, const RowOptimizer& optimizer) {
  TableState state;
  state.width = table.width();
  state.state_width = optimizer.state_width();
  state.keys = table.keys();
  state.rows.resize(state.keys.size() * state.width);
  state.state.resize(state.keys.size() * state.state_width);
  state.steps.resize(state.keys.size());
  for (std::size_t i = 0; i < state.keys.size(); ++i) {
    const std::size_t slot = *table.slot(state.keys[i]);
    const float* row = table.find(state.keys[i]);
    std::copy(row, row + state.width, state.rows.data() + i * state.width);
    state.steps[i] = optimizer.read_row_state(slot, state.state.data() + i * state.state_width);
  }
  return state;
}

std::optional<std::string> table_state_problem(const TableState& state) {
  const std::size_t n = state.keys.size();
  if (state.width == 0) return std::string("rows of width 0");
  if (state.rows.size() / state.width != n || state.rows.size() % state.width != 0)
    return fmt::format("{} row floats for {} keys of width {}", state.rows.size(), n, state.width);
  if (state.state_width == 0 || state.state.size() / state.state_width != n ||
      state.state.size() % state.state_width != 0)
    return fmt::format("{} optimizer floats for {} keys of {} each", state.state.size(), n, state.state_width);
  if (state.steps.size() != n) return fmt::format("{} step counts for {} keys", state.steps.size(), n);
  for (std::size_t i = 1; i < n; ++i)
    if (state.keys[i] <= state.keys[i - 1])
      return fmt::format("key {} follows key {}: keys must be sorted and unique", state.keys[i], state.keys[i - 1]);
  return std::nullopt;
}

Status restore_table_state(EmbeddingTable& table, RowOptimizer& optimizer, const TableState& state) {
  if (auto problem = table_state_problem(state)) return Error{*problem};
  if (state.width != table.width() || state.state_width != optimizer.state_width())
    return Error{fmt::format("rows of width {} with {} optimizer floats each, where the table's rows are {} wide "
                             "and its {} keeps {}",
                             state.width, state.state_width, table.width(), optimizer.name(),
                             optimizer.state_width())};
  if (table.size() != 0) return Error{fmt::format("restore into a table holding {} rows already", table.size())};
  for (std::size_t i = 0; i < state.size(); ++i) {
    auto slot = table.restore_row(state.keys[i], state.rows.data() + i * state.width);
    if (!slot) return Error{slot.error()};
    optimizer.restore_row_state(*slot, state.state.data() + i * state.state_width, state.steps[i]);
  }
  return success();
}

Result<TableState> resplit_table_state(const std::vector<const TableState*>& parts, std::uint64_t index,
                                       std::uint64_t count) {
  if (count == 0 || index >= count) return Error{fmt::format("shard {} of {}", index, count)};
  if (parts.empty()) return Error{"no parts to re-split"};
  // (key, part, row) of every kept key, then in key order.
  std::vector<std::pair<std::uint64_t, std::pair<std::size_t, std::size_t>>> kept;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const auto& part = *parts[p];
    if (auto problem = table_state_problem(part)) return Error{fmt::format("part {}: {}", p, *problem)};
    if (part.width != parts[0]->width || part.state_width != parts[0]->state_width)
      return Error{fmt::format("part {} has rows of width {} and {} optimizer floats, part 0 {} and {}", p,
                               part.width, part.state_width, parts[0]->width, parts[0]->state_width)};
    for (std::size_t i = 0; i < part.size(); ++i)
      if (part.keys[i] % count == index) kept.push_back({part.keys[i], {p, i}});
  }
  std::sort(kept.begin(), kept.end());
  TableState joined;
  joined.width = parts[0]->width;
  joined.state_width = parts[0]->state_width;
  for (std::size_t j = 0; j < kept.size(); ++j) {
    if (j > 0 && kept[j].first == kept[j - 1].first)
      return Error{fmt::format("key {} is in parts {} and {}", kept[j].first, kept[j - 1].second.first,
                               kept[j].second.first)};
    const auto& part = *parts[kept[j].second.first];
    const std::size_t i = kept[j].second.second;
    joined.keys.push_back(kept[j].first);
    joined.rows.insert(joined.rows.end(), part.rows.begin() + i * part.width, part.rows.begin() + (i + 1) * part.width);
    joined.state.insert(joined.state.end(), part.state.begin() + i * part.state_width,
                        part.state.begin() + (i + 1) * part.state_width);
    joined.steps.push_back(part.steps[i]);
  }
  return joined;
}

}  // namespace psgrad
