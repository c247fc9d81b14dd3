// Sync training with backup workers: each step takes the first gradients to arrive and drops the rest.
#include <doctest/doctest.h>

#include <numeric>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "tests/actor_fixtures.hpp"
#include "tests/local_run.hpp"
#include "tests/sparse_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

TrainingSummary train(const TrainingJob& job, std::shared_ptr<const Dataset> data) {
  return train_locally(job, data, data);
}

}  // namespace

TEST_CASE("a sync step with one backup worker applies exactly num_workers - 1 gradients") {
  const auto data = synthetic_data(320, 12, 4, 21);
  auto job = small_job(TrainingMode::sync, 3, 15);
  job.cluster.backup_workers = 1;
  const auto summary = train(job, data);
  CHECK(summary.steps == 15);
  CHECK(summary.final_weights.version == 15);
  CHECK(total(summary.gradients_per_worker) == 15 * 2);
  CHECK(summary.samples == 15 * 2 * job.training.batch_size);
}

TEST_CASE("with a backup worker a straggler's late gradients are dropped and the fast workers set the pace") {
  const auto data = synthetic_data(320, 12, 4, 22);
  auto job = small_job(TrainingMode::sync, 3, 40);
  job.cluster.backup_workers = 1;
  // The last worker takes 30 ms per gradient, far longer than the others' 2 ms, and the run (40 steps
  // of at least 2 ms) outlasts several of its gradients.
  job.cluster.worker_delay = std::chrono::milliseconds{2};
  job.cluster.straggler_delay = std::chrono::milliseconds{28};
  const auto summary = train(job, data);
  CHECK(summary.steps == 40);
  REQUIRE(summary.workers.dropped.size() == 3);
  CHECK(summary.workers.dropped[2] > 0);
  CHECK(summary.gradients_per_worker[2] < summary.gradients_per_worker[0]);
  CHECK(summary.gradients_per_worker[2] < summary.gradients_per_worker[1]);
}

TEST_CASE("with a backup worker on 2 server shards every step sums num_workers - 1 gradients and drops the straggler's") {
  // Each shard would otherwise take the first gradients to reach it, which need not be the same ones.
  const auto data = synthetic_data(320, 12, 4, 24);
  auto job = small_job(TrainingMode::sync, 3, 40);
  job.cluster.servers = 2;
  job.cluster.backup_workers = 1;
  job.cluster.worker_delay = std::chrono::milliseconds{2};
  job.cluster.straggler_delay = std::chrono::milliseconds{28};
  const auto summary = train(job, data);
  CHECK(summary.steps == 40);
  CHECK(summary.final_weights.version == 40);
  CHECK(total(summary.gradients_per_worker) == 40 * 2);
  REQUIRE(summary.workers.dropped.size() == 3);
  CHECK(summary.workers.dropped[2] > 0);
  CHECK(summary.lost.empty());
}

TEST_CASE("without backup workers a sync step waits for the straggler and drops nothing") {
  const auto data = synthetic_data(320, 12, 4, 23);
  auto job = small_job(TrainingMode::sync, 3, 6);
  job.cluster.straggler_delay = std::chrono::milliseconds{10};
  const auto summary = train(job, data);
  CHECK(summary.gradients_per_worker == std::vector<std::uint64_t>{6, 6, 6});
  CHECK(summary.workers.dropped == std::vector<std::uint64_t>{0, 0, 0});
}

TEST_CASE("with a backup worker a model with tables sums the rows of the gradients its steps took and learns") {
  // The dense part is cut over the 2 shards too: its first shard chooses each step's workers, and the other
  // dense shard and both table shards learn from it which: the straggler's gradient and rows are dropped,
  // and its late pushes are no fault. Had the dense shards summed different workers, they would disagree.
  const auto train_data = colour_task(600, 31);
  const auto dev = colour_task(300, 32);
  auto job = sparse_job(TrainingMode::sync, 3, 2, 60);
  job.cluster.backup_workers = 1;
  job.cluster.worker_delay = std::chrono::milliseconds{2};
  job.cluster.straggler_delay = std::chrono::milliseconds{28};
  ActorConfig config(2);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  const auto trained = train_in_process(system, job, run_on_columns(train_data, dev));
  REQUIRE_MESSAGE(trained.ok(), (trained.ok() ? "" : trained.error()));
  const auto& summary = trained->run;
  CHECK(summary.steps == 60);
  CHECK(total(summary.gradients_per_worker) == 60 * 2);
  REQUIRE(summary.workers.dropped.size() == 3);
  CHECK(summary.workers.dropped[2] > 0);
  CHECK(summary.lost.empty());
  // Every example's tokens carry its colour: the rows and dense part learned the rule together.
  CHECK(summary.final_accuracy >= 0.9);
}
