// Tables' rows with their row optimizers' state, read out and restored: a restored table steps on as the
// one it was read from, whichever optimizer and however its rows are re-split over shards.
#include <doctest/doctest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "model/lazy_adam.hpp"
#include "model/sparse_adagrad.hpp"
#include "model/checkpoint_tables.hpp"
#include "model/table_state.hpp"

using namespace psgrad;

namespace {

constexpr std::size_t width = 3;

EmbeddingTableSettings table_settings() {
  EmbeddingTableSettings settings;
  settings.width = width;
  settings.init_seed = 11;
  return settings;
}

std::unique_ptr<RowOptimizer> optimizer_of(bool adagrad) {
  if (adagrad) return std::make_unique<SparseAdagrad>(AdagradSettings{}, width);
  LazyAdamSettings adam;
  adam.learn_rate = 0.05;
  return std::make_unique<LazyAdam>(adam, width);
}

// Step `step`'s gradient: different keys each step, so rows have different step counts.
SparseRows gradient_at(int step) {
  std::vector<std::uint64_t> keys;
  for (std::uint64_t key = 0; key < 12; ++key)
    if ((key + static_cast<std::uint64_t>(step)) % 3 != 0) keys.push_back(key * 7 + 1);
  SparseRows gradient(keys, width);
  for (std::size_t i = 0; i < gradient.values.size(); ++i)
    gradient.values[i] = 0.1f * static_cast<float>((i + static_cast<std::size_t>(step)) % 5) - 0.2f;
  return gradient;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("a table restored from its rows and row state steps on bit for bit as the original") {
  for (bool adagrad : {false, true}) {
    CAPTURE(adagrad);
    EmbeddingTable original(table_settings());
    auto original_optimizer = optimizer_of(adagrad);
    for (int step = 0; step < 4; ++step) REQUIRE(original.apply(gradient_at(step), *original_optimizer).ok());
    const auto saved = read_table_state(original, *original_optimizer);
    CHECK(saved.size() == original.size());
    CHECK(saved.state_width == (adagrad ? width : 2 * width));
    if (!adagrad) CHECK(saved.steps[0] > 0);

    EmbeddingTable restored(table_settings());
    auto restored_optimizer = optimizer_of(adagrad);
    REQUIRE(restore_table_state(restored, *restored_optimizer, saved).ok());
    for (int step = 4; step < 7; ++step) {
      REQUIRE(original.apply(gradient_at(step), *original_optimizer).ok());
      REQUIRE(restored.apply(gradient_at(step), *restored_optimizer).ok());
    }
    const auto a = read_table_state(original, *original_optimizer);
    const auto b = read_table_state(restored, *restored_optimizer);
    CHECK(a.keys == b.keys);
    CHECK(same_bits(a.rows, b.rows));
    CHECK(same_bits(a.state, b.state));
    CHECK(a.steps == b.steps);
  }
}

TEST_CASE("a table's state restores only into an empty table of its widths and optimizer") {
  EmbeddingTable table(table_settings());
  auto adam = optimizer_of(false);
  REQUIRE(table.apply(gradient_at(0), *adam).ok());
  const auto saved = read_table_state(table, *adam);
  EmbeddingTable other(table_settings());
  auto adagrad = optimizer_of(true);
  const auto wrong_optimizer = restore_table_state(other, *adagrad, saved);
  REQUIRE_FALSE(wrong_optimizer.ok());
  CHECK(wrong_optimizer.error().find("Adagrad") != std::string::npos);
  CHECK_FALSE(restore_table_state(table, *optimizer_of(false), saved).ok());  // holds rows already
  auto damaged = saved;
  damaged.steps.pop_back();
  CHECK(restore_table_state(other, *optimizer_of(false), damaged).error().find("step counts") != std::string::npos);
}

TEST_CASE("rows re-split from 3 shards into 2 and back hold every row once, on its key % count shard") {
  EmbeddingTable whole(table_settings());
  auto optimizer = optimizer_of(false);
  for (int step = 0; step < 3; ++step) REQUIRE(whole.apply(gradient_at(step), *optimizer).ok());
  const auto all = read_table_state(whole, *optimizer);
  std::vector<TableState> three;
  for (std::uint64_t i = 0; i < 3; ++i) three.push_back(resplit_table_state({&all}, i, 3).value());
  std::vector<TableState> two;
  for (std::uint64_t i = 0; i < 2; ++i)
    two.push_back(resplit_table_state({&three[0], &three[1], &three[2]}, i, 2).value());
  for (std::uint64_t i = 0; i < 2; ++i)
    for (auto key : two[i].keys) CHECK(key % 2 == i);
  const auto joined = resplit_table_state({&two[0], &two[1]}, 0, 1).value();
  CHECK(joined.keys == all.keys);
  CHECK(same_bits(joined.rows, all.rows));
  CHECK(same_bits(joined.state, all.state));
  CHECK(joined.steps == all.steps);
  const auto twice = resplit_table_state({&all, &three[1]}, 0, 1);
  REQUIRE_FALSE(twice.ok());
  CHECK(twice.error().find("is in parts") != std::string::npos);
}

TEST_CASE("a checkpoint's shard parts must each be their shard, at the dense part's step") {
  EmbeddingTable whole(table_settings());
  auto optimizer = optimizer_of(false);
  REQUIRE(whole.apply(gradient_at(0), *optimizer).ok());
  const auto all = read_table_state(whole, *optimizer);
  TrainingCheckpoint checkpoint;
  checkpoint.version = 5;
  CHECK(shard_parts_problem(checkpoint) == "no tables part");
  CHECK(table_state_size(checkpoint).rows == 0);
  checkpoint.tables.emplace();
  for (std::uint32_t i = 0; i < 2; ++i)
    checkpoint.tables->shards.push_back(ShardTablesState{i, 2, 5, {resplit_table_state({&all}, i, 2).value()}});
  CHECK_FALSE(shard_parts_problem(checkpoint));
  CHECK(tables_for_shard(checkpoint, 0, 1).value()[0].keys == all.keys);
  CHECK(table_state_size(checkpoint).rows == all.size());
  auto late = checkpoint;
  late.tables->shards[1].version = 4;
  CHECK(shard_parts_problem(late)->find("step 4") != std::string::npos);
  auto swapped = checkpoint;
  std::swap(swapped.tables->shards[0].tables, swapped.tables->shards[1].tables);
  CHECK(shard_parts_problem(swapped)->find("belongs to shard") != std::string::npos);
}
