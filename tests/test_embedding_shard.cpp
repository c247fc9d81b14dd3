// The EmbeddingShard actor on its own: what it refuses, when a sync pull is answered, which rows it makes.
#include <doctest/doctest.h>

#include <string>
#include <variant>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/embedding_shard.hpp"
#include "runtime/error_text.hpp"

using namespace psgrad;

namespace {

struct ShardFixture {
  ActorConfig config{2};
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  EmbeddingShardActor shard;

  // Shard 1 of 2 over two tables of width 2 (keys below rows, 0: any), Adagrad without clipping, two workers.
  explicit ShardFixture(TrainingMode mode, std::uint64_t rows = 0, bool pipelined = false) {
    EmbeddingShardSetup setup;
    setup.index = 1;
    setup.count = 2;
    for (std::uint64_t seed : {5, 6}) {
      EmbeddingTableSettings table;
      table.width = 2;
      table.init_seed = seed;
      table.rows = rows;
      setup.tables.push_back(table);
    }
    setup.optimizer.kind = TableOptimizerKind::adagrad;
    setup.mode = mode;
    setup.workers = 2;
    setup.pipelined = pipelined;
    shard = spawn_embedding_shard(system, setup).value();
  }
  ~ShardFixture() { caf::anon_send_exit(shard, caf::exit_reason::user_shutdown); }

  // The pull's answer, or the shard's reason for refusing it.
  std::variant<PulledRows, std::string> pull(const RowPull& pull) {
    std::variant<PulledRows, std::string> outcome = std::string("no answer");
    self->request(shard, std::chrono::seconds(10), pull_atom::value, pull)
        .receive([&](PulledRows& rows) { outcome = std::move(rows); },
                 [&](caf::error& error) { outcome = error_text(system, error); });
    return outcome;
  }

  // The push's outcome: empty when taken, else the shard's reason.
  std::string push(RowPush push) {
    std::string outcome = "no answer";
    self->request(shard, std::chrono::seconds(10), push_rows_atom::value, std::move(push))
        .receive([&](bool) { outcome.clear(); }, [&](caf::error& error) { outcome = error_text(system, error); });
    return outcome;
  }
};

RowPush push_of(std::uint64_t version, std::uint32_t worker, std::vector<std::uint64_t> keys, std::size_t width = 2) {
  SparseRows rows(std::move(keys), width);
  std::fill(rows.values.begin(), rows.values.end(), 0.5f);
  return RowPush{version, worker, {TableRows{0, std::move(rows)}}, {}};
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a table shard refuses another shard's keys, unsorted keys, rows of another width and a second push") {
  ShardFixture fixture(TrainingMode::sync);
  CHECK(contains(fixture.push(push_of(0, 0, {3, 4})), "key 4 belongs to shard 0, not to shard 1 of 2"));
  CHECK(contains(fixture.push(push_of(0, 0, {5, 3})), "sorted and unique"));
  CHECK(contains(fixture.push(push_of(0, 0, {3}, 3)), "where rows are 2 wide"));
  CHECK(contains(fixture.push(push_of(0, 7, {3})), "worker 7, but the run has 2 workers"));
  RowPush other_table = push_of(0, 0, {3});
  other_table.tables[0].table = 2;
  CHECK(contains(fixture.push(other_table), "table 2, but there are 2 tables"));
  CHECK(fixture.push(push_of(0, 0, {3})).empty());
  CHECK(contains(fixture.push(push_of(0, 0, {5})), "worker 0 pushed twice"));
}

TEST_CASE("a table shard refuses keys beyond its table's rows, so a faulty worker cannot grow it") {
  ShardFixture fixture(TrainingMode::sync, 1000);
  CHECK(contains(fixture.push(push_of(0, 0, {999, 1001})), "table 0: key 1001 is beyond its 1000 rows"));
  CHECK(contains(fixture.push(push_of(0, 0, {std::uint64_t{1} << 40 | 1})), "is beyond its 1000 rows"));
  std::string pulled = "no answer";
  fixture.self
      ->request(fixture.shard, std::chrono::seconds(10), pull_atom::value, RowPull{0, false, {TableKeys{1, {3, 2001}}}})
      .receive([&](const PulledRows& rows) { pulled = rows.refusal.empty() ? "answered" : rows.refusal; },
               [&](caf::error& error) { pulled = error_text(fixture.system, error); });
  CHECK(contains(pulled, "table 1: key 2001 is beyond its 1000 rows"));
  CHECK(fixture.push(push_of(0, 0, {1, 999})).empty());
}

TEST_CASE("a sync table shard answers a pull for the next version only once every worker's push is applied") {
  ShardFixture fixture(TrainingMode::sync);
  const RowPull pull{0, false, {TableKeys{0, {3, 7}}}};
  PulledRows before;
  fixture.self->request(fixture.shard, std::chrono::seconds(10), pull_atom::value, pull)
      .receive([&](PulledRows& rows) { before = std::move(rows); }, [](caf::error&) { FAIL("pull refused"); });
  REQUIRE(before.tables.size() == 1);
  CHECK(before.version == 0);
  REQUIRE(fixture.push(push_of(0, 0, {3})).empty());
  // The pull for version 1 waits: worker 1's push for step 0 is still missing.
  RowPull next = pull;
  next.version = 1;
  // Sent, not requested: its answer comes back as a plain message, read below.
  fixture.self->send(fixture.shard, pull_atom::value, next);
  // Rows are read without being made: key 7 was pulled, but no gradient reached it.
  PulledRows tables;
  fixture.self->request(fixture.shard, std::chrono::seconds(10), tables_atom::value, std::uint64_t{0})
      .receive([&](PulledRows& rows) { tables = std::move(rows); }, [](caf::error&) { FAIL("tables refused"); });
  REQUIRE(tables.tables.size() == 2);
  CHECK(tables.tables[0].rows.keys.empty());
  REQUIRE(fixture.push(push_of(0, 1, {})).empty());
  std::optional<PulledRows> answered;
  fixture.self->receive([&](PulledRows& rows) { answered = std::move(rows); },
                        caf::after(std::chrono::seconds(10)) >> [] {});
  REQUIRE(answered.has_value());
  const auto& after = *answered;
  CHECK(after.version == 1);
  REQUIRE(after.tables.size() == 1);
  CHECK(after.tables[0].rows.keys == std::vector<std::uint64_t>{3, 7});
  CHECK(after.tables[0].rows.row(0)[0] != before.tables[0].rows.row(0)[0]);  // stepped
  CHECK(after.tables[0].rows.row(1)[0] == before.tables[0].rows.row(1)[0]);  // no gradient: as it was
  fixture.self->request(fixture.shard, std::chrono::seconds(10), tables_atom::value, std::uint64_t{1})
      .receive([&](PulledRows& rows) { tables = std::move(rows); }, [](caf::error&) { FAIL("tables refused"); });
  CHECK(tables.tables[0].rows.keys == std::vector<std::uint64_t>{3});
  CHECK(tables.tables[1].rows.keys.empty());
}

TEST_CASE("a pipelined sync table shard answers a pull a version behind with the rows of that version") {
  ShardFixture fixture(TrainingMode::sync, 0, true);
  const RowPull at_zero{0, false, {TableKeys{0, {3, 7}}}};
  const auto before = fixture.pull(at_zero);
  REQUIRE(std::holds_alternative<PulledRows>(before));
  // Step 0 changes key 3's row (key 7's stays as made).
  REQUIRE(fixture.push(push_of(0, 0, {3})).empty());
  REQUIRE(fixture.push(push_of(0, 1, {})).empty());
  RowPull at_one = at_zero;
  at_one.version = 1;
  const auto after = fixture.pull(at_one);
  REQUIRE(std::holds_alternative<PulledRows>(after));
  const auto& stepped = std::get<PulledRows>(after).tables[0].rows;
  const auto& made = std::get<PulledRows>(before).tables[0].rows;
  REQUIRE(stepped.row(0)[0] != made.row(0)[0]);
  // A worker's pipelined step from the weights of version 0 gets version 0's rows, not the stepped ones.
  const auto behind = fixture.pull(at_zero);
  REQUIRE(std::holds_alternative<PulledRows>(behind));
  const auto& old_rows = std::get<PulledRows>(behind);
  CHECK(old_rows.version == 0);
  CHECK(old_rows.tables[0].rows.values == made.values);
  // Its push feeds step 1; once step 1 is taken, version 0 is two behind and its rows are gone.
  REQUIRE(fixture.push(push_of(1, 0, {7})).empty());
  REQUIRE(fixture.push(push_of(1, 1, {})).empty());
  const auto gone = fixture.pull(at_zero);
  REQUIRE(std::holds_alternative<std::string>(gone));
  CHECK(contains(std::get<std::string>(gone), "keeps no older rows"));
  const auto at_two = fixture.pull(RowPull{2, false, {TableKeys{0, {3, 7}}}});
  REQUIRE(std::holds_alternative<PulledRows>(at_two));
  CHECK(std::get<PulledRows>(at_two).tables[0].rows.row(1)[0] != made.row(1)[0]);  // key 7 stepped at 1
  // Without the pipeline a pull a version behind is refused.
  ShardFixture plain(TrainingMode::sync);
  REQUIRE(plain.push(push_of(0, 0, {3})).empty());
  REQUIRE(plain.push(push_of(0, 1, {})).empty());
  const auto refused = plain.pull(at_zero);
  REQUIRE(std::holds_alternative<std::string>(refused));
  CHECK(contains(std::get<std::string>(refused), "keeps no older rows"));
}
