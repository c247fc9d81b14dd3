// The evaluator of a model with tables against real table shards: the dev set pulled in parts scores as in one pull, and
// a sync shard lets its held step go once the last part is answered; async, version 0 is scored with
// the seed's rows, without pulling them.
#include <doctest/doctest.h>

#include <chrono>
#include <optional>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/evaluator.hpp"
#include "model/random.hpp"
#include "model/sparse_model.hpp"
#include "runtime/error_text.hpp"
#include "tests/sparse_fixtures.hpp"
#include "tests/sparse_shard_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

TEST_CASE("a dev set pulled from the shards in parts of 3 keys scores as in one pull, and lets the held step go") {
  ActorConfig config(2);
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  auto job = sparse_job(TrainingMode::sync, 1, 2, 4);
  job.evaluation.frequency = 1;  // the shards hold every step until the evaluator has pulled
  const auto train = colour_task(64, 1);
  const auto dev = colour_task(50, 2);
  auto model = model_for(job, *train);
  model.dense().initialize(derive_seed(job.training.seed, RandomStream::initial_weights));
  const auto shards = spawn_table_shards(system, job, model, 2);
  REQUIRE(introduce_table_shards(system, job, shards).ok());
  auto in_parts = spawn_evaluator(system, job, EvaluatorSetup{nullptr, EvaluatorTables{dev, shards, 3}});
  auto whole = spawn_evaluator(system, job, EvaluatorSetup{nullptr, EvaluatorTables{dev, shards}});
  REQUIRE(in_parts.ok());
  REQUIRE(whole.ok());
  // Every actor goes when the test does, a failed one too (the system waits for them on its way out).
  const std::shared_ptr<void> end_all(nullptr, [&](void*) {
    for (const auto& actor : {caf::actor_cast<caf::actor>(*in_parts), caf::actor_cast<caf::actor>(*whole),
                              caf::actor_cast<caf::actor>(shards[0]), caf::actor_cast<caf::actor>(shards[1])})
      caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  });
  const auto& dense = model.dense();
  const Weights weights{0, dense.layout().hash(), FloatBuffer::copy_of(dense.weights().data(), dense.weights().size())};
  auto evaluate = [&](const EvaluatorActor& evaluator) {
    EvaluationReport report;
    self->request(evaluator, std::chrono::seconds(10), evaluate_atom::value, weights, TrainingProgress{})
        .receive([&](EvaluationReport& answer) { report = answer; },
                 [&](caf::error& error) { FAIL(error_text(system, error)); });
    return report;
  };
  const auto parted = evaluate(*in_parts);
  const auto one_pull = evaluate(*whole);
  CHECK(parted.accuracy == one_pull.accuracy);
  CHECK(parted.loss == one_pull.loss);
  CHECK(parted.loss > 0.0);

  // Step 0 was held for the evaluation; with the worker's (empty) pushes in, each shard takes it, and a
  // pull of version 1 is answered.
  for (const auto& shard : shards)
    self->request(shard, std::chrono::seconds(10), push_rows_atom::value, RowPush{0, 0, {}, {}})
        .receive([&](bool) {}, [&](caf::error& error) { FAIL(error_text(system, error)); });
  for (const auto& shard : shards) {
    std::uint64_t version = 0;
    self->request(shard, std::chrono::seconds(10), pull_atom::value, RowPull{1, false, {}})
        .receive([&](PulledRows& rows) { version = rows.version; },
                 [&](caf::error& error) { FAIL(error_text(system, error)); });
    CHECK(version == 1);
  }
}

TEST_CASE("an async evaluator scores version 0 with the seed's rows, as the untouched shards would answer, without asking them") {
  ActorConfig config(2);
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  auto job = sparse_job(TrainingMode::async, 1, 2, 4);
  const auto train = colour_task(64, 1);
  const auto dev = colour_task(50, 2);
  auto model = model_for(job, *train);
  model.dense().initialize(derive_seed(job.training.seed, RandomStream::initial_weights));
  const auto shards = spawn_table_shards(system, job, model, 2);
  auto evaluator = spawn_evaluator(system, job, EvaluatorSetup{nullptr, EvaluatorTables{dev, shards}});
  REQUIRE(evaluator.ok());
  const std::shared_ptr<void> end_all(nullptr, [&](void*) {
    for (const auto& actor : {caf::actor_cast<caf::actor>(*evaluator), caf::actor_cast<caf::actor>(shards[0]),
                              caf::actor_cast<caf::actor>(shards[1])})
      caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  });
  const auto& dense = model.dense();
  auto evaluate = [&](std::uint64_t version) {
    const Weights weights{version, dense.layout().hash(),
                          FloatBuffer::copy_of(dense.weights().data(), dense.weights().size())};
    std::optional<EvaluationReport> report;
    self->request(*evaluator, std::chrono::seconds(10), evaluate_atom::value, weights, TrainingProgress{})
        .receive([&](EvaluationReport& answer) { report = answer; }, [&](caf::error&) {});
    return report;
  };
  // Version 1 is pulled: no push has reached the shards, so they answer every row as the seed made it.
  const auto pulled = evaluate(1);
  REQUIRE(pulled.has_value());
  // With the shards gone, version 0 still scores, and the same; version 1 no longer can.
  for (const auto& shard : shards) {
    self->monitor(shard);
    caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
    self->receive([](const caf::down_msg&) {});
  }
  const auto seeded = evaluate(0);
  REQUIRE(seeded.has_value());
  CHECK(seeded->accuracy == pulled->accuracy);
  CHECK(seeded->loss == pulled->loss);
  CHECK(seeded->loss > 0.0);
  CHECK_FALSE(evaluate(1).has_value());
}
