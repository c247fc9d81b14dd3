// The sparse table: rows made on first touch from (seed, key) alone, pulls and applies by key, and
// shards that together do bit for bit what one table does.
#include <doctest/doctest.h>

#include <cstring>
#include <vector>

#include "model/embedding_table.hpp"
#include "model/lazy_adam.hpp"
#include "model/sparse_adagrad.hpp"

using namespace psgrad;

namespace {

EmbeddingTableSettings settings_of(std::size_t width, std::uint64_t seed) {
  EmbeddingTableSettings settings;
  settings.width = width;
  settings.init_seed = seed;
  return settings;
}

bool same_bits(const float* a, const float* b, std::size_t count) {
  return std::memcmp(a, b, count * sizeof(float)) == 0;
}

SparseRows gradient_of(const std::vector<std::uint64_t>& keys, std::size_t width, float base) {
  SparseRows gradient(keys, width);
  for (std::size_t i = 0; i < gradient.values.size(); ++i)
    gradient.values[i] = base * static_cast<float>(i % 7) - 0.5f;
  return gradient;
}

// The rows of gradient with odd keys (or even ones), as one of two shards receives them.
SparseRows part_of(const SparseRows& gradient, bool odd) {
  std::vector<std::uint64_t> keys;
  for (auto key : gradient.keys)
    if ((key % 2 == 1) == odd) keys.push_back(key);
  SparseRows part(keys, gradient.width);
  std::size_t at = 0;
  for (std::size_t i = 0; i < gradient.size(); ++i)
    if ((gradient.keys[i] % 2 == 1) == odd) std::memcpy(part.row(at++), gradient.row(i), gradient.width * sizeof(float));
  return part;
}

}  // namespace

TEST_CASE("a row is made on first touch, within Thinc's uniform_init bounds") {
  EmbeddingTable table(settings_of(16, 3));
  CHECK(table.size() == 0);
  CHECK(table.find(42) == nullptr);
  auto rows = table.pull({7, 42});
  REQUIRE(rows.ok());
  CHECK(table.size() == 2);
  CHECK(table.contains(42));
  CHECK_FALSE(table.contains(8));
  for (float x : rows->values) {
    CHECK(x >= -0.1f);
    CHECK(x <= 0.1f);
  }
  CHECK(same_bits(table.find(42), rows->row(1), 16));
  // Not all equal: each of a row's columns is its own draw.
  CHECK(rows->row(0)[0] != rows->row(0)[1]);
}

TEST_CASE("a row's first value depends only on the seed and its key, not on the order of touches") {
  EmbeddingTable first(settings_of(8, 11));
  EmbeddingTable second(settings_of(8, 11));
  REQUIRE(first.pull({1, 5, 9}).ok());
  REQUIRE(first.pull({2, 3}).ok());
  REQUIRE(second.pull({2, 3, 9}).ok());
  REQUIRE(second.pull({1, 5}).ok());
  for (std::uint64_t key : {1, 2, 3, 5, 9}) {
    CAPTURE(key);
    CHECK(same_bits(first.find(key), second.find(key), 8));
  }
  std::vector<float> fresh(8);
  first.initial_row(9, fresh.data());
  CHECK(same_bits(fresh.data(), first.find(9), 8));
  EmbeddingTable other_seed(settings_of(8, 12));
  REQUIRE(other_seed.pull({9}).ok());
  CHECK_FALSE(same_bits(other_seed.find(9), first.find(9), 8));
  CHECK_FALSE(same_bits(first.find(1), first.find(2), 8));
}

TEST_CASE("pull and apply refuse keys out of order and rows of another width") {
  EmbeddingTable table(settings_of(4, 0));
  const auto unsorted = table.pull({3, 2});
  REQUIRE_FALSE(unsorted.ok());
  CHECK(unsorted.error() == "pull: keys must be sorted and unique, but key 2 at position 1 follows 3");
  CHECK_FALSE(table.pull({2, 2}).ok());
  LazyAdam optimizer(LazyAdamSettings{}, 4);
  const auto wide = table.apply(gradient_of({1}, 5, 1.0f), optimizer);
  REQUIRE_FALSE(wide.ok());
  CHECK(wide.error() == "apply: gradient rows of width 5 and an optimizer of width 4 for a table of width 4");
  SparseRows short_values({1, 2}, 4);
  short_values.values.pop_back();
  CHECK_FALSE(table.apply(short_values, optimizer).ok());
  CHECK(table.size() == 0);
}

TEST_CASE("apply steps only the rows its gradient names, leaving other rows and their state untouched") {
  EmbeddingTable table(settings_of(6, 5));
  REQUIRE(table.pull({10, 20, 30, 40}).ok());
  std::vector<float> before_30(table.find(30), table.find(30) + 6);
  std::vector<float> before_10(table.find(10), table.find(10) + 6);
  LazyAdam optimizer(LazyAdamSettings{}, 6);
  for (int step = 0; step < 3; ++step) REQUIRE(table.apply(gradient_of({10, 20, 40}, 6, 0.25f), optimizer).ok());
  CHECK(same_bits(before_30.data(), table.find(30), 6));
  CHECK_FALSE(same_bits(before_10.data(), table.find(10), 6));
  const std::size_t slot_30 = *table.slot(30);
  CHECK(optimizer.row_steps(slot_30) == 0);
  CHECK(optimizer.first_moment(slot_30) == nullptr);
  CHECK(optimizer.row_steps(*table.slot(10)) == 3);
  // A gradient for a key never pulled makes its row first, from the same initial value.
  EmbeddingTable reference(settings_of(6, 5));
  REQUIRE(reference.pull({50}).ok());
  LazyAdam reference_optimizer(LazyAdamSettings{}, 6);
  REQUIRE(reference.apply(gradient_of({50}, 6, 1.0f), reference_optimizer).ok());
  REQUIRE(table.apply(gradient_of({50}, 6, 1.0f), optimizer).ok());
  CHECK(same_bits(reference.find(50), table.find(50), 6));
}

// Runs the same batches through one table and through two shards (even and odd keys), each shard
// clipping by the whole gradient's norm, and checks every row ends with the same bits.
template <class Optimizer, class Settings>
void check_shards_match_one_table(const Settings& settings) {
  const std::size_t width = 5;
  EmbeddingTable whole(settings_of(width, 77));
  EmbeddingTable even(settings_of(width, 77));
  EmbeddingTable odd(settings_of(width, 77));
  Optimizer whole_optimizer(settings, width), even_optimizer(settings, width), odd_optimizer(settings, width);
  const std::vector<std::vector<std::uint64_t>> batches = {{1, 2, 3, 8}, {2, 5, 8, 13}, {1, 3, 13, 20}, {5, 6}};
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const SparseRows gradient = gradient_of(batches[b], width, 1.0f + static_cast<float>(b));
    REQUIRE(gradient_squares(gradient) > settings.grad_clip * settings.grad_clip);  // every step clips
    // Each shard is pulled its own keys first, as a worker's pulls reach them.
    REQUIRE(whole.pull(gradient.keys).ok());
    REQUIRE(even.pull(part_of(gradient, false).keys).ok());
    REQUIRE(odd.pull(part_of(gradient, true).keys).ok());
    REQUIRE(whole.apply(gradient, whole_optimizer).ok());
    const double total = gradient_squares(gradient);
    REQUIRE(even.apply(part_of(gradient, false), even_optimizer, total).ok());
    REQUIRE(odd.apply(part_of(gradient, true), odd_optimizer, total).ok());
  }
  for (std::uint64_t key : {1, 2, 3, 5, 6, 8, 13, 20}) {
    CAPTURE(key);
    const EmbeddingTable& shard = key % 2 == 1 ? odd : even;
    CHECK(same_bits(whole.find(key), shard.find(key), width));
  }
}

TEST_CASE("two shards splitting the keys end bit for bit where one table ends, clipping included") {
  LazyAdamSettings adam;
  adam.learn_rate = 0.05;
  adam.grad_clip = 1.0;
  adam.L2 = 0.1;
  check_shards_match_one_table<LazyAdam>(adam);
  AdagradSettings adagrad;
  adagrad.learn_rate = 0.1;
  adagrad.grad_clip = 1.0;
  check_shards_match_one_table<SparseAdagrad>(adagrad);
}

TEST_CASE("a shard clips by the whole gradient's norm when given it, not by its own part's") {
  AdagradSettings settings;  // Adagrad's step depends on the gradient's scale, Adam's first step hardly
  settings.grad_clip = 1.0;
  const SparseRows gradient = gradient_of({1, 2, 3, 8}, 4, 1.0f);
  const SparseRows odd_part = part_of(gradient, true);
  REQUIRE(gradient_squares(odd_part) > 1.0);
  EmbeddingTable alone(settings_of(4, 77)), shared(settings_of(4, 77));
  SparseAdagrad alone_optimizer(settings, 4), shared_optimizer(settings, 4);
  REQUIRE(alone.apply(odd_part, alone_optimizer).ok());
  REQUIRE(shared.apply(odd_part, shared_optimizer, gradient_squares(gradient)).ok());
  CHECK_FALSE(same_bits(alone.find(1), shared.find(1), 4));
}

TEST_CASE("embedding_init_seed gives each field of a run its own seed") {
  CHECK(embedding_init_seed(0, 0) != embedding_init_seed(0, 1));
  CHECK(embedding_init_seed(0, 0) != embedding_init_seed(1, 0));
  CHECK(embedding_init_seed(4, 2) == embedding_init_seed(4, 2));
}
