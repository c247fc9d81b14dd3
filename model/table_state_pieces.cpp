#include "model/table_state_pieces.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace psgrad {

namespace {

// The words a row takes in a message: its floats and state, its key and step count (8 bytes each).
std::uint64_t row_words(const TableState& table) { return table.width + table.state_width + 4; }

TableState empty_like(const TableState& table) {
  TableState empty;
  empty.width = table.width;
  empty.state_width = table.state_width;
  return empty;
}

void append_rows(TableState& into, const TableState& from, std::size_t first, std::size_t count) {
  into.keys.insert(into.keys.end(), from.keys.begin() + first, from.keys.begin() + first + count);
  into.steps.insert(into.steps.end(), from.steps.begin() + first, from.steps.begin() + first + count);
  into.rows.insert(into.rows.end(), from.rows.begin() + first * from.width,
                   from.rows.begin() + (first + count) * from.width);
  into.state.insert(into.state.end(), from.state.begin() + first * from.state_width,
                    from.state.begin() + (first + count) * from.state_width);
}

}  // namespace

std::vector<std::vector<TableState>> cut_table_states(const std::vector<TableState>& tables,
                                                      std::uint64_t max_words) {
  std::vector<std::vector<TableState>> pieces;
  const auto new_piece = [&] {
    pieces.emplace_back();
    for (const auto& table : tables) pieces.back().push_back(empty_like(table));
  };
  new_piece();
  std::uint64_t words = 0;  // in the last piece
  for (std::size_t t = 0; t < tables.size(); ++t) {
    const auto& table = tables[t];
    const std::uint64_t per_row = row_words(table);
    for (std::size_t first = 0; first < table.size();) {
      if (words + per_row > max_words && words > 0) {
        new_piece();
        words = 0;
      }
      const std::uint64_t room = max_words > words ? (max_words - words) / per_row : 0;
      const std::size_t count = std::min<std::size_t>(table.size() - first, std::max<std::uint64_t>(room, 1));
      append_rows(pieces.back()[t], table, first, count);
      words += count * per_row;
      first += count;
    }
  }
  return pieces;
}

Status append_table_states(std::vector<TableState>& joined, std::vector<TableState> piece) {
  if (joined.empty()) {
    for (std::size_t t = 0; t < piece.size(); ++t)
      if (auto problem = table_state_problem(piece[t])) return Error{fmt::format("table {}: {}", t, *problem)};
    joined = std::move(piece);
    return success();
  }
  if (piece.size() != joined.size())
    return Error{fmt::format("a piece of {} tables, where the first had {}", piece.size(), joined.size())};
  for (std::size_t t = 0; t < piece.size(); ++t) {
    auto& into = joined[t];
    const auto& from = piece[t];
    if (from.width != into.width || from.state_width != into.state_width)
      return Error{fmt::format("table {}: a piece of rows of width {} with {} optimizer floats, the first's {} and {}",
                               t, from.width, from.state_width, into.width, into.state_width)};
    if (auto problem = table_state_problem(from)) return Error{fmt::format("table {}: {}", t, *problem)};
    if (from.size() == 0) continue;
    if (!into.keys.empty() && from.keys.front() <= into.keys.back())
      return Error{fmt::format("table {}: a piece starts at key {}, after key {}", t, from.keys.front(),
                               into.keys.back())};
    append_rows(into, from, 0, from.size());
  }
  return success();
}

}  // namespace psgrad
