// A shard's part of the tables cut into pieces of bounded size and joined back, as a resumed run's rows
// travel to a table shard process.
#include <doctest/doctest.h>

#include "model/table_state_pieces.hpp"

using namespace psgrad;

namespace {

// A table of `count` rows of `width` floats with 2 optimizer floats each, keys 0, 3, 6, ...
TableState table_of(std::size_t count, std::uint64_t width, float first) {
  TableState table;
  table.width = width;
  table.state_width = 2;
  for (std::size_t i = 0; i < count; ++i) {
    table.keys.push_back(3 * i);
    table.steps.push_back(i + 1);
    for (std::uint64_t w = 0; w < width; ++w) table.rows.push_back(first + static_cast<float>(i * width + w));
    table.state.push_back(static_cast<float>(i));
    table.state.push_back(-static_cast<float>(i));
  }
  return table;
}

void check_same(const std::vector<TableState>& a, const std::vector<TableState>& b) {
  REQUIRE(a.size() == b.size());
  for (std::size_t t = 0; t < a.size(); ++t) {
    CAPTURE(t);
    CHECK(a[t].width == b[t].width);
    CHECK(a[t].state_width == b[t].state_width);
    CHECK(a[t].keys == b[t].keys);
    CHECK(a[t].rows == b[t].rows);
    CHECK(a[t].state == b[t].state);
    CHECK(a[t].steps == b[t].steps);
  }
}

}  // namespace

TEST_CASE("a shard's tables cut into pieces of bounded size join back to the same tables") {
  const std::vector<TableState> tables{table_of(10, 4, 0.0f), table_of(0, 2, 0.0f), table_of(7, 8, 100.0f)};
  // A row of width 4 takes 4 + 2 + 4 words, one of width 8 takes 14.
  for (std::uint64_t max_words : {1, 10, 14, 25, 100, 1000000}) {
    CAPTURE(max_words);
    const auto pieces = cut_table_states(tables, max_words);
    REQUIRE(!pieces.empty());
    std::vector<TableState> joined;
    for (const auto& piece : pieces) {
      REQUIRE(piece.size() == tables.size());
      std::uint64_t words = 0;
      std::size_t rows = 0;
      for (const auto& table : piece) {
        words += table.size() * (table.width + table.state_width + 4);
        rows += table.size();
      }
      // Within the bound, or one row that alone exceeds it.
      CHECK((words <= max_words || rows == 1));
      REQUIRE(append_table_states(joined, piece).ok());
    }
    check_same(joined, tables);
    if (max_words == 1000000) CHECK(pieces.size() == 1);
    if (max_words == 1) CHECK(pieces.size() == 17);
  }
}

TEST_CASE("tables without rows travel as one piece of empty tables") {
  const std::vector<TableState> tables{table_of(0, 4, 0.0f), table_of(0, 8, 0.0f)};
  const auto pieces = cut_table_states(tables, 100);
  REQUIRE(pieces.size() == 1);
  std::vector<TableState> joined;
  REQUIRE(append_table_states(joined, pieces[0]).ok());
  check_same(joined, tables);
}

TEST_CASE("a piece that does not continue the tables before it is refused, naming the table") {
  std::vector<TableState> joined{table_of(3, 4, 0.0f)};
  auto again = append_table_states(joined, {table_of(2, 4, 0.0f)});
  REQUIRE(!again.ok());
  CHECK(again.error() == "table 0: a piece starts at key 0, after key 6");
  auto wider = append_table_states(joined, {table_of(2, 8, 0.0f)});
  REQUIRE(!wider.ok());
  CHECK(wider.error().find("table 0: a piece of rows of width 8") == 0);
  auto more = append_table_states(joined, {table_of(1, 4, 0.0f), table_of(1, 4, 0.0f)});
  REQUIRE(!more.ok());
  CHECK(more.error() == "a piece of 2 tables, where the first had 1");
  auto broken = table_of(2, 4, 0.0f);
  broken.steps.pop_back();
  std::vector<TableState> fresh;
  auto refused = append_table_states(fresh, {broken});
  REQUIRE(!refused.ok());
  CHECK(refused.error() == "table 0: 1 step counts for 2 keys");
}
