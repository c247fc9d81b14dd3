#include "actors/pull_parts.hpp"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

namespace psgrad {

std::vector<RowPull> cut_pull(const RowPull& pull, std::size_t max_keys) {
  max_keys = std::max<std::size_t>(max_keys, 1);
  std::vector<RowPull> parts(1, RowPull{pull.version, false, {}});
  std::size_t room = max_keys;
  for (const auto& table : pull.tables) {
    std::size_t from = 0;
    while (from < table.keys.size()) {
      if (room == 0) {
        parts.push_back(RowPull{pull.version, false, {}});
        room = max_keys;
      }
      const std::size_t count = std::min(room, table.keys.size() - from);
      const auto begin = table.keys.begin() + static_cast<std::ptrdiff_t>(from);
      parts.back().tables.push_back(TableKeys{table.table, std::vector<std::uint64_t>(begin, begin + count)});
      from += count;
      room -= count;
    }
  }
  parts.back().evaluation = pull.evaluation;
  return parts;
}

Result<PulledRows> join_pull_answers(std::vector<PulledRows> answers) {
  if (answers.empty()) return PulledRows{};
  // Sync parts are all answered at the pull's version; async ones as the rows are, pushes between them
  // included, as an async evaluation reads its rows anyway: the last part's version stands.
  PulledRows joined{answers.back().version, {}};
  for (auto& answer : answers) {
    for (auto& table : answer.tables) {
      // A table cut between two parts continues where the last part left it.
      if (!joined.tables.empty() && joined.tables.back().table == table.table) {
        auto& rows = joined.tables.back().rows;
        if (rows.width != table.rows.width)
          return Error{fmt::format("the parts of one pull hold table {} at widths {} and {}", table.table,
                                   rows.width, table.rows.width)};
        rows.keys.insert(rows.keys.end(), table.rows.keys.begin(), table.rows.keys.end());
        rows.values.insert(rows.values.end(), table.rows.values.begin(), table.rows.values.end());
        continue;
      }
      joined.tables.push_back(std::move(table));
    }
  }
  return joined;
}

}  // namespace psgrad
