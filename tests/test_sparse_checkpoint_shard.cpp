// The EmbeddingShard actor's part in checkpoints: a sync shard holds a checkpoint point's step until its
// tables are read, answers with its rows and row state, and starts from a checkpoint's rows when resumed.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/embedding_shard.hpp"
#include "runtime/error_text.hpp"
#include "tests/sparse_shard_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

EmbeddingShardSetup shard_setup() { return one_table_shard_setup(1, 2); }

RowPush push_of(std::uint64_t version, std::uint32_t worker, std::vector<std::uint64_t> keys) {
  SparseRows rows(std::move(keys), 2);
  std::fill(rows.values.begin(), rows.values.end(), 0.5f);
  return RowPush{version, worker, {TableRows{0, std::move(rows)}}, {}};
}

struct Shard {
  ActorConfig config{2};
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  EmbeddingShardActor shard;

  explicit Shard(const EmbeddingShardSetup& setup) { shard = spawn_embedding_shard(system, setup).value(); }
  ~Shard() { caf::anon_send_exit(shard, caf::exit_reason::user_shutdown); }

  void push(RowPush push) {
    self->request(shard, std::chrono::seconds(10), push_rows_atom::value, std::move(push))
        .receive([](bool) {}, [&](caf::error& error) { FAIL(error_text(system, error)); });
  }
  Result<ShardTablesState> state(std::uint64_t version) {
    Result<ShardTablesState> answer = Error{"no answer"};
    self->request(shard, std::chrono::seconds(10), table_state_atom::value, version)
        .receive([&](ShardTablesState& state) { answer = std::move(state); },
                 [&](caf::error& error) { answer = Error{error_text(system, error)}; });
    return answer;
  }
};

}  // namespace

TEST_CASE("a sync shard holds a checkpoint point's step until the checkpoint has read its tables") {
  auto setup = shard_setup();
  setup.checkpoint_holds = EvaluationHolds{false, 2, 0, 0, 10};  // checkpoints at 2, 4, 6, 8
  Shard shard(setup);
  for (std::uint64_t version : {0, 1}) {
    shard.push(push_of(version, 0, {3}));
    shard.push(push_of(version, 1, {5}));
  }
  // Both steps' pushes are in, but the step from 2 waits: asked for the tables after 3 steps, it says nothing.
  shard.push(push_of(2, 0, {3}));
  shard.push(push_of(2, 1, {}));
  shard.self->send(shard.shard, tables_atom::value, std::uint64_t{3});
  std::optional<PulledRows> early;
  shard.self->receive([&](PulledRows& rows) { early = std::move(rows); },
                      caf::after(std::chrono::milliseconds(200)) >> [] {});
  CHECK_FALSE(early.has_value());
  const auto at_2 = shard.state(2);
  REQUIRE(at_2.ok());
  CHECK(at_2->version == 2);
  CHECK(at_2->index == 1);
  REQUIRE(at_2->tables.size() == 1);
  CHECK(at_2->tables[0].keys == std::vector<std::uint64_t>{3, 5});
  CHECK(at_2->tables[0].steps == std::vector<std::uint64_t>{2, 2});
  CHECK(at_2->tables[0].state.size() == 2 * 4);  // lazy Adam: two moments of width 2 a row
  // Read, the step goes and the tables of version 3 come.
  std::optional<PulledRows> after;
  shard.self->receive([&](PulledRows& rows) { after = std::move(rows); },
                      caf::after(std::chrono::seconds(10)) >> [] {});
  REQUIRE(after.has_value());
  CHECK(after->version == 3);
  const auto late = shard.state(2);
  REQUIRE_FALSE(late.ok());
  CHECK(late.error().find("keeps no older state") != std::string::npos);
}

TEST_CASE("a shard resumed from a checkpoint's part starts from its rows and row state") {
  auto first = shard_setup();
  Shard original(first);
  original.push(push_of(0, 0, {3, 7}));
  original.push(push_of(0, 1, {5}));
  const auto saved = original.state(1).value();
  auto resumed_setup = shard_setup();
  resumed_setup.version = 1;
  resumed_setup.restore = saved.tables;
  Shard resumed(resumed_setup);
  for (auto* shard : {&original, &resumed}) {
    shard->push(push_of(1, 0, {3}));
    shard->push(push_of(1, 1, {9}));
  }
  const auto a = original.state(2).value();
  const auto b = resumed.state(2).value();
  CHECK(b.version == 2);
  CHECK(a.tables[0].keys == b.tables[0].keys);
  CHECK(a.tables[0].rows == b.tables[0].rows);
  CHECK(a.tables[0].state == b.tables[0].state);
  CHECK(a.tables[0].steps == b.tables[0].steps);

  auto wrong_shard = shard_setup();
  wrong_shard.index = 0;
  wrong_shard.restore = saved.tables;
  const auto refused = spawn_embedding_shard(original.system, wrong_shard);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().find("belongs to shard 1, not to shard 0") != std::string::npos);
}
