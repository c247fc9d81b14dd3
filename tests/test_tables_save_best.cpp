// training.save_best for a model with tables: the table shards keep the rows of the best evaluation,
// exactly that step's in sync mode, in one process and across processes.
#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <mutex>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/embedding_shard.hpp"
#include "actors/local_training.hpp"
#include "model/early_stopping.hpp"
#include "runtime/error_text.hpp"
#include "tests/sparse_fixtures.hpp"
#include "tests/sparse_shard_fixtures.hpp"
#include "tests/sparse_processes.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

struct Watched {
  TrainedRun trained;
  std::vector<EvaluationReport> reports;    // in order
  std::map<std::uint64_t, Weights> weights;  // by version: each evaluation's dense weights
};

Watched train_watched(const TrainingJob& job, std::shared_ptr<const SparseDataset> train,
                      std::shared_ptr<const SparseDataset> dev) {
  ActorConfig config(2);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  Watched watched;
  auto mutex = std::make_shared<std::mutex>();
  auto run = run_on_columns(std::move(train), std::move(dev));
  run.on_snapshot = [&watched, mutex](const EvaluationReport& report, const Weights& weights) {
    std::lock_guard<std::mutex> lock(*mutex);
    watched.reports.push_back(report);
    watched.weights[weights.version] = weights;
  };
  auto trained = train_in_process(system, job, std::move(run));
  REQUIRE_MESSAGE(trained.ok(), (trained.ok() ? "" : trained.error()));
  watched.trained = std::move(trained).value();
  return watched;
}

// The evaluation BestWeights keeps, by its rule: the first of the highest accuracies, the final one included.
EvaluationReport best_of(const std::vector<EvaluationReport>& reports) {
  EarlyStopping best(0);
  EvaluationReport kept;
  for (const auto& report : reports)
    if (report.final ? best.record_final(report.version, report.accuracy) : best.record(report.version, report.accuracy))
      kept = report;
  return kept;
}

bool same_bits(const float* a, std::size_t a_size, const float* b, std::size_t b_size) {
  return a_size == b_size && (a_size == 0 || std::memcmp(a, b, a_size * sizeof(float)) == 0);
}

bool same_tables(const std::vector<SparseRows>& a, const std::vector<SparseRows>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t f = 0; f < a.size(); ++f)
    if (a[f].keys != b[f].keys || !same_bits(a[f].values.data(), a[f].values.size(), b[f].values.data(), b[f].values.size()))
      return false;
  return true;
}

// A run whose dev accuracy goes up and down: a rate this high overshoots, so its best evaluation is not its last.
TrainingJob wavering_job(std::size_t shards) {
  auto job = sparse_job(TrainingMode::sync, 2, shards, 60);
  job.optimizer.settings["learn_rate"] = 0.3;
  job.evaluation.frequency = 5;
  job.training.save_best = true;
  return job;
}

}  // namespace

TEST_CASE("with save_best a sync run with tables ends with its best evaluation's rows, those of a run stopped there") {
  const auto train = colour_task(300, 1);
  const auto dev = colour_task(60, 2);
  for (std::size_t shards : {1, 2}) {
    CAPTURE(shards);
    const auto job = wavering_job(shards);
    const auto kept = train_watched(job, train, dev);
    const auto best = best_of(kept.reports);
    REQUIRE_MESSAGE(best.iteration < job.training.iterations, "the fixture's run must peak before its end");
    // The same run without save_best: holding each evaluation's step until it is scored changes no number.
    auto plain = job;
    plain.training.save_best = false;
    const auto last = train_watched(plain, train, dev);
    const auto& kept_final = kept.trained.run.final_weights;
    CHECK(same_bits(kept_final.values.data(), kept_final.values.size(), last.trained.run.final_weights.values.data(),
                    last.trained.run.final_weights.values.size()));
    // Stopped at the best evaluation's step, a run ends with the rows save_best kept.
    auto stopped = plain;
    stopped.training.iterations = best.iteration;
    const auto at_best = train_watched(stopped, train, dev);
    CHECK(same_tables(kept.trained.tables, at_best.trained.tables));
    CHECK_FALSE(same_tables(kept.trained.tables, last.trained.tables));
    // And its dense weights are those the best evaluation scored (what BestWeights keeps).
    const auto& scored = kept.weights.at(best.version);
    CHECK(same_bits(scored.values.data(), scored.values.size(), at_best.trained.run.final_weights.values.data(),
                    at_best.trained.run.final_weights.values.size()));
  }
}

TEST_CASE("with save_best a sync run with tables across processes keeps the rows one process keeps, bit for bit") {
  const auto train = colour_task(300, 1);
  const auto dev = colour_task(60, 2);
  const auto job = wavering_job(2);
  const auto expected = train_watched(job, train, dev);
  const auto run = run_sparse_processes(job, train, dev, {2});
  REQUIRE_MESSAGE(run.server.ok(), (run.server.ok() ? "" : run.server.error() + "\n" + run.events));
  CHECK(same_tables(run.server->tables, expected.trained.tables));
}

TEST_CASE("with save_best a sync shard holds an evaluation's step until it is scored, then keeps that step's rows") {
  auto setup = one_table_shard_setup(0, 1);
  setup.holds = EvaluationHolds{false, 2, 0, 0, 10};  // evaluations at 2, 4, 6, 8
  setup.keeps_best = true;
  ActorConfig config{2};
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  const auto shard = spawn_embedding_shard(system, setup).value();
  const auto push = [&](std::uint64_t version, std::uint32_t worker, std::vector<std::uint64_t> keys) {
    SparseRows rows(std::move(keys), 2);
    std::fill(rows.values.begin(), rows.values.end(), 0.5f);
    self->request(shard, std::chrono::seconds(10), push_rows_atom::value,
                  RowPush{version, worker, {TableRows{0, std::move(rows)}}, {}})
        .receive([](bool) {}, [&](caf::error& error) { FAIL(error_text(system, error)); });
  };
  const auto ask = [&](auto... message) {
    std::optional<PulledRows> answer;
    self->request(shard, std::chrono::seconds(10), message...)
        .receive([&](PulledRows& rows) { answer = std::move(rows); },
                 [&](caf::error& error) { FAIL(error_text(system, error)); });
    return answer.value();
  };
  for (std::uint64_t version : {0, 1}) {
    push(version, 0, {3});
    push(version, 1, {4});
  }
  const auto at_2 = ask(tables_atom::value, std::uint64_t{2});
  // The evaluator pulls the rows of version 2 (what a dense run's hold waits for), then both workers push step 2.
  RowPull pull;
  pull.version = 2;
  pull.evaluation = true;
  pull.tables.push_back(TableKeys{0, {3, 4}});
  ask(pull_atom::value, std::move(pull));
  push(2, 0, {3});
  push(2, 1, {4});
  // Pulled but not yet scored, the step from 2 still waits: asked for the tables after 3 steps, it says nothing.
  self->send(shard, tables_atom::value, std::uint64_t{3});
  std::optional<PulledRows> early;
  self->receive([&](PulledRows& rows) { early = std::move(rows); }, caf::after(std::chrono::milliseconds(200)) >> [] {});
  CHECK_FALSE(early.has_value());
  // Scored as the best so far: it keeps the rows of version 2 and the step goes.
  self->send(shard, scored_atom::value, std::uint64_t{2}, true);
  std::optional<PulledRows> after;
  self->receive([&](PulledRows& rows) { after = std::move(rows); }, caf::after(std::chrono::seconds(10)) >> [] {});
  REQUIRE(after.has_value());
  CHECK(after->version == 3);
  const auto best = ask(best_tables_atom::value);
  REQUIRE(best.tables.size() == 1);
  REQUIRE(at_2.tables.size() == 1);
  CHECK(best.version == 2);
  CHECK(best.tables[0].rows.keys == at_2.tables[0].rows.keys);
  CHECK(best.tables[0].rows.values == at_2.tables[0].rows.values);
  CHECK(after->tables[0].rows.values != at_2.tables[0].rows.values);
  caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
}
