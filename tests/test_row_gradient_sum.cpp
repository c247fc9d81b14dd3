// Row gradients summed per key in worker order, and split over shards by key % K and joined back.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "model/key_shards.hpp"
#include "model/row_gradient_sum.hpp"

using namespace psgrad;

namespace {

SparseRows rows_of(std::vector<std::uint64_t> keys, std::vector<float> values) {
  SparseRows rows(std::move(keys), 1);
  rows.values = std::move(values);
  return rows;
}

}  // namespace

TEST_CASE("row gradients are summed per key over the workers that touched it, in worker order") {
  const auto first = rows_of({2, 5}, {1e8f, 1.0f});
  const auto second = rows_of({2, 7}, {-1e8f, -0.0f});
  const auto third = rows_of({2, 5}, {1.0f, 2.0f});
  const auto sum = sum_row_gradients({&first, &second, &third});
  CHECK(sum.keys == std::vector<std::uint64_t>{2, 5, 7});
  CHECK(sum.values[0] == (1e8f + -1e8f) + 1.0f);  // worker order: 1, where (1e8 + 1) - 1e8 would be 0
  CHECK(sum.values[1] == 3.0f);
  // Only worker 1 touched key 7: its row as it is, the sign of its zero too (0 + -0 would be +0).
  CHECK(std::signbit(sum.values[2]));
  const auto reordered = sum_row_gradients({&first, &third, &second});
  CHECK(reordered.values[0] == (1e8f + 1.0f) + -1e8f);
  CHECK(reordered.values[0] != sum.values[0]);
  const auto unsorted = rows_of({5, 2}, {1.0f, 1.0f});
  CHECK_THROWS_AS(sum_row_gradients({&first, &unsorted}), std::invalid_argument);
}

TEST_CASE("keys and rows split by key % shards join back in key order, and a wrong answer is named") {
  const auto rows = rows_of({0, 1, 4, 6, 9, 10}, {0, 1, 4, 6, 9, 10});
  const auto parts = split_rows(rows, 3);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].keys == std::vector<std::uint64_t>{0, 6, 9});
  CHECK(parts[1].keys == std::vector<std::uint64_t>{1, 4, 10});
  CHECK(parts[2].keys.empty());
  CHECK(split_keys(rows.keys, 3)[1] == parts[1].keys);
  const auto joined = join_rows(rows.keys, 1, {&parts[0], &parts[1], &parts[2]});
  REQUIRE(joined.ok());
  CHECK(joined->values == rows.values);
  const auto wrong = rows_of({1, 4}, {1, 4});
  const auto refused = join_rows(rows.keys, 1, {&parts[0], &wrong, &parts[2]});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().find("shard 1") != std::string::npos);
  CHECK(merge_rows({&parts[1], &parts[0]}, 1).keys == rows.keys);
}
