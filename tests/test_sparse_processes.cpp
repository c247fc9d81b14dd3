// Sparse runs with every table shard and worker in an actor system of its own, over loopback.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "actors/local_training.hpp"
#include "tests/sparse_fixtures.hpp"
#include "tests/sparse_processes.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

TrainedRun train_in_one_process(const TrainingJob& job, std::shared_ptr<const SparseDataset> train,
                                std::shared_ptr<const SparseDataset> dev) {
  ActorConfig config(2);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  auto summary = train_in_process(system, job, run_on_columns(std::move(train), std::move(dev)));
  REQUIRE_MESSAGE(summary.ok(), (summary.ok() ? "" : summary.error()));
  return std::move(summary).value();
}

bool same_bits(const float* a, std::size_t a_size, const float* b, std::size_t b_size) {
  return a_size == b_size && (a_size == 0 || std::memcmp(a, b, a_size * sizeof(float)) == 0);
}

std::string failure(const Result<RunEnding>& ending) {
  if (!ending) return ending.error();
  return ending->outcome == RunEnding::Outcome::finished ? std::string() : ending->failure;
}

}  // namespace

TEST_CASE("sync sparse runs across processes end with the weights and rows of one process, bit for bit, on 1, 2 and 4 table shards") {
  auto train = colour_task(300, 1);
  auto dev = colour_task(60, 2);
  for (std::size_t shards : {1, 2, 4}) {
    CAPTURE(shards);
    const auto job = sparse_job(TrainingMode::sync, 2, shards, 12);
    const auto expected = train_in_one_process(job, train, dev);
    const auto run = run_sparse_processes(job, train, dev, {shards});
    REQUIRE_MESSAGE(run.server.ok(), (run.server.ok() ? "" : run.server.error() + "\n" + run.events));
    for (const auto& shard : run.shards) CHECK(failure(shard) == "");
    for (const auto& worker : run.workers) CHECK(failure(worker) == "");
    const auto& got = run.server->run.final_weights;
    CHECK(got.version == expected.run.final_weights.version);
    CHECK(same_bits(got.values.data(), got.values.size(), expected.run.final_weights.values.data(),
                    expected.run.final_weights.values.size()));
    REQUIRE(run.server->tables.size() == expected.tables.size());
    for (std::size_t f = 0; f < expected.tables.size(); ++f) {
      CAPTURE(f);
      CHECK(!expected.tables[f].keys.empty());
      CHECK(run.server->tables[f].keys == expected.tables[f].keys);
      CHECK(same_bits(run.server->tables[f].values.data(), run.server->tables[f].values.size(),
                      expected.tables[f].values.data(), expected.tables[f].values.size()));
    }
  }
}

TEST_CASE("async sparse runs across processes apply every gradient once and learn the hidden rule") {
  const auto train = colour_task(600, 21);
  const auto dev = colour_task(300, 22);
  const auto job = sparse_job(TrainingMode::async, 2, 2, 150);
  const auto run = run_sparse_processes(job, train, dev, {2});
  REQUIRE_MESSAGE(run.server.ok(), (run.server.ok() ? "" : run.server.error() + "\n" + run.events));
  for (const auto& worker : run.workers) CHECK(failure(worker) == "");
  for (const auto& shard : run.shards) CHECK(failure(shard) == "");
  std::vector<std::size_t> per_class(3, 0);
  for (const auto label : dev->labels) ++per_class[label];
  const double majority = static_cast<double>(*std::max_element(per_class.begin(), per_class.end())) /
                          static_cast<double>(dev->count);
  CHECK(run.server->run.steps == 300);  // every batch's gradient applied once
  // Every example's tokens carry its colour: a model that learned the rule is right on nearly all of them.
  MESSAGE("dev accuracy " << run.server->run.final_accuracy << ", majority class " << majority);
  CHECK(run.server->run.final_accuracy >= 0.9);
  CHECK(majority < 0.5);
  std::size_t rows = 0;
  for (const auto& table : run.server->tables) rows += table.keys.size();
  CHECK(rows > 0);
}

TEST_CASE("a table shard with another table layout is refused at join, naming the shard and what differs") {
  auto train = colour_task(100, 1);
  auto dev = colour_task(30, 2);
  const auto job = sparse_job(TrainingMode::sync, 1, 2, 4);
  SparseProcessesOptions options{2};
  options.join_timeout = std::chrono::seconds(3);
  options.shard_job = [](const TrainingJob& base, std::size_t i) {
    auto job = base;
    if (i == 1) job.model.settings["embedding_rows"] = std::vector<std::int64_t>{400, 50};
    return job;
  };
  const auto run = run_sparse_processes(job, train, dev, options);
  CHECK(!run.server.ok());
  REQUIRE(!run.shards[1].ok());
  CHECK(run.shards[1].error().find("table 0 has 400 rows (nV), the server's 500") != std::string::npos);
  CHECK(run.events.find("refused table shard 1 from shard-thread-1: table 0 has 400 rows") != std::string::npos);
}

TEST_CASE("a worker with another table layout is refused at join, naming the worker and what differs") {
  auto train = colour_task(100, 1);
  auto dev = colour_task(30, 2);
  const auto job = sparse_job(TrainingMode::sync, 1, 1, 4);
  SparseProcessesOptions options{1};
  options.join_timeout = std::chrono::seconds(3);
  options.worker_job = [](const TrainingJob& base, std::size_t) {
    auto job = base;
    job.model.settings["seed"] = std::int64_t{9};
    return job;
  };
  const auto run = run_sparse_processes(job, train, dev, options);
  CHECK(!run.server.ok());
  REQUIRE(!run.workers[0].ok());
  CHECK(run.workers[0].error().find("table 0 hashes with seed 9, the server's 8") != std::string::npos);
  CHECK(run.events.find("refused worker 0 from worker-thread-0: table 0 hashes with seed 9") != std::string::npos);
}

TEST_CASE("a table shard refuses before allocating a share of the tables its machine cannot hold") {
  auto train = colour_task(100, 1);
  auto dev = colour_task(30, 2);
  const auto job = sparse_job(TrainingMode::sync, 1, 2, 4);
  SparseProcessesOptions options{2};
  options.join_timeout = std::chrono::seconds(3);
  options.shard_machine_bytes = 1000;  // bytes: far less than 275 rows of 8 and 4 floats
  const auto run = run_sparse_processes(job, train, dev, options);
  CHECK(!run.server.ok());
  for (std::size_t i = 0; i < 2; ++i) {
    REQUIRE(!run.shards[i].ok());
    CHECK(run.shards[i].error().find(fmt::format("table shard {} of 2: its share of the tables needs", i)) == 0);
    CHECK(run.shards[i].error().find("this machine has 1000.0 B") != std::string::npos);
  }
}

TEST_CASE("a lost table shard ends the run in one line naming it, and every worker and shard with it") {
  auto train = colour_task(300, 1);
  auto dev = colour_task(60, 2);
  const auto job = sparse_job(TrainingMode::sync, 2, 2, 1000000);  // ends only by the loss
  SparseProcessesOptions options{2};
  options.lost_shard = 1;
  const auto run = run_sparse_processes(job, train, dev, options);
  REQUIRE(!run.server.ok());
  CHECK(run.server.error().find("table shard 1 lost: ") == 0);
  CHECK(run.server.error().find('\n') == std::string::npos);
  for (const auto& worker : run.workers) {
    REQUIRE(worker.ok());
    CHECK(worker->outcome == RunEnding::Outcome::failed_on_server);
    CHECK_MESSAGE(worker->failure.find("table shard 1") != std::string::npos, worker->failure);
  }
  REQUIRE(run.shards[0].ok());
  CHECK(run.shards[0]->outcome == RunEnding::Outcome::failed_on_server);
}
