// Cutting a big pull into parts and joining their answers: keys in order, the evaluation mark on the last
// part only, tables cut between parts joined back.
#include <doctest/doctest.h>

#include <numeric>

#include "actors/pull_parts.hpp"

using namespace psgrad;

namespace {

std::vector<std::uint64_t> keys_from(std::uint64_t first, std::size_t count) {
  std::vector<std::uint64_t> keys(count);
  std::iota(keys.begin(), keys.end(), first);
  return keys;
}

// What a shard would answer to `pull`: each key's row filled with the key's value.
PulledRows answer_to(const RowPull& pull, std::size_t width) {
  PulledRows answer{pull.version, {}};
  for (const auto& table : pull.tables) {
    SparseRows rows(table.keys, width);
    for (std::size_t i = 0; i < rows.size(); ++i) std::fill_n(rows.row(i), width, static_cast<float>(rows.keys[i]));
    answer.tables.push_back(TableRows{table.table, std::move(rows)});
  }
  return answer;
}

}  // namespace

TEST_CASE("a pull is cut into parts of at most the given keys, the evaluation mark on the last one only") {
  const RowPull pull{7, true, {TableKeys{0, keys_from(0, 5)}, TableKeys{3, keys_from(100, 4)}}};
  const auto parts = cut_pull(pull, 3);
  REQUIRE(parts.size() == 3);
  std::vector<std::uint64_t> seen;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    CHECK(parts[p].version == 7);
    CHECK(parts[p].evaluation == (p + 1 == parts.size()));
    std::size_t count = 0;
    for (const auto& table : parts[p].tables) {
      count += table.keys.size();
      seen.insert(seen.end(), table.keys.begin(), table.keys.end());
    }
    CHECK(count <= 3);
  }
  // Table 0's keys 3 and 4 share the second part with table 3's first key.
  CHECK(parts[1].tables.size() == 2);
  std::vector<std::uint64_t> all = keys_from(0, 5);
  const auto second = keys_from(100, 4);
  all.insert(all.end(), second.begin(), second.end());
  CHECK(seen == all);
}

TEST_CASE("an empty pull is still one part, so a sync shard holding no dev key still lets its step go") {
  const auto parts = cut_pull(RowPull{4, true, {}}, 3);
  REQUIRE(parts.size() == 1);
  CHECK(parts[0].evaluation);
  CHECK(parts[0].tables.empty());
}

TEST_CASE("the parts' answers join into the whole pull's answer") {
  const RowPull pull{2, true, {TableKeys{1, keys_from(10, 7)}, TableKeys{2, keys_from(50, 2)}}};
  std::vector<PulledRows> answers;
  for (const auto& part : cut_pull(pull, 4)) answers.push_back(answer_to(part, 3));
  const auto joined = join_pull_answers(answers);
  REQUIRE(joined.ok());
  const auto whole = answer_to(pull, 3);
  CHECK(joined->version == 2);
  REQUIRE(joined->tables.size() == whole.tables.size());
  for (std::size_t t = 0; t < whole.tables.size(); ++t) {
    CHECK(joined->tables[t].table == whole.tables[t].table);
    CHECK(joined->tables[t].rows.keys == whole.tables[t].rows.keys);
    CHECK(joined->tables[t].rows.values == whole.tables[t].rows.values);
  }
}

TEST_CASE("parts that hold one table at two widths are refused") {
  const RowPull pull{0, false, {TableKeys{0, keys_from(0, 4)}}};
  const auto parts = cut_pull(pull, 2);
  REQUIRE(parts.size() == 2);
  const auto joined = join_pull_answers({answer_to(parts[0], 2), answer_to(parts[1], 3)});
  REQUIRE_FALSE(joined.ok());
  CHECK(joined.error().find("widths 2 and 3") != std::string::npos);
}
