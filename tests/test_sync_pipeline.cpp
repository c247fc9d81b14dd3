// Sync with cluster.pipeline: every worker keeps two pushes out, so each step sums gradients from the
// weights one step older than its own; the pipeline drains at every stopping point. Pinned: the same
// weights whatever the threads, the staleness reported, and a resumed run that ends as the
// uninterrupted one.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "tests/actor_fixtures.hpp"
#include "tests/local_run.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

TrainingJob pipelined_job(std::uint64_t iterations) {
  auto job = small_job(TrainingMode::sync, 3, iterations);
  job.cluster.pipeline = true;
  return job;
}

TrainingSummary run(const TrainingJob& job, std::shared_ptr<const Dataset> data, std::size_t threads,
                    const std::optional<TrainingCheckpoint>& resume = std::nullopt,
                    std::vector<TrainingCheckpoint>* checkpoints = nullptr) {
  return train_locally(job, data, threads, resume, checkpoints);
}

TrainingSummary run_without_pipeline(TrainingJob job, std::shared_ptr<const Dataset> data) {
  job.cluster.pipeline = false;
  return run(job, data, 2);
}

}  // namespace

TEST_CASE("pipelined sync steps from gradients a step old, with the same weights on detached and shared workers") {
  const auto data = synthetic_data(256, 784, 10, 21);
  const auto job = pipelined_job(12);
  // 3 workers on 4 threads have a thread each; on 2 threads they share them.
  const auto detached = run(job, data, 4);
  const auto shared = run(job, data, 2);
  CHECK(detached.final_weights.version == 12);
  CHECK(detached.final_weights.values == shared.final_weights.values);
  // The first step's gradients come from the starting weights, every later one's from a step before.
  CHECK(detached.staleness_min == 0);
  CHECK(detached.staleness_max == 1);
  CHECK(detached.staleness_mean == doctest::Approx(11.0 / 12.0));
  CHECK(detached.gradients_per_worker == std::vector<std::uint64_t>{12, 12, 12});
  // Not the weights of sync without the pipeline.
  const auto unpipelined = run_without_pipeline(job, data);
  CHECK(unpipelined.staleness_max == 0);
  CHECK_FALSE(unpipelined.final_weights.values == detached.final_weights.values);
}

TEST_CASE("pipelined sync drains at each checkpoint, and a run resumed from one ends with the uninterrupted weights") {
  const auto data = synthetic_data(256, 784, 10, 22);
  auto job = pipelined_job(9);
  job.training.checkpoint_every = 4;
  std::vector<TrainingCheckpoint> checkpoints;
  const auto uninterrupted = run(job, data, 2, std::nullopt, &checkpoints);
  REQUIRE(checkpoints.size() >= 2);
  REQUIRE(checkpoints[0].iteration == 4);
  // Steps 1, 5 and 9 (after the checkpoints at 4 and 8) start the pipeline again, from their own weights.
  CHECK(uninterrupted.staleness_mean == doctest::Approx(6.0 / 9.0));
  const auto resumed = run(job, data, 2, checkpoints[0]);
  CHECK(resumed.final_weights.version == 9);
  CHECK(resumed.final_weights.values == uninterrupted.final_weights.values);
}

TEST_CASE("with a stopping point at every step pipelined sync is plain sync") {
  const auto data = synthetic_data(256, 784, 10, 23);
  auto job = pipelined_job(6);
  job.evaluation.frequency = 1;  // every step drains the pipeline: each gradient is from its step's weights
  const auto pipelined = run(job, data, 2);
  const auto plain = run_without_pipeline(job, data);
  CHECK(pipelined.staleness_max == 0);
  CHECK(pipelined.final_weights.values == plain.final_weights.values);
}

TEST_CASE("one pipelined sync worker steps as one pipelined async worker") {
  // Both push twice from the starting weights, then from each answer: the same gradients in the same
  // order, so the same weights. Async hands out credits as steps are applied (5 at most ahead): a worker
  // out of credit while its last push is out waits for that answer and starts from the newer weights,
  // as async should. 5 steps are all granted at the start, so no credit arrives late whatever the load.
  const auto data = synthetic_data(256, 784, 10, 24);
  auto job = small_job(TrainingMode::sync, 1, 5);
  job.cluster.pipeline = true;
  const auto sync = run(job, data, 2);
  job.cluster.mode = TrainingMode::async;
  const auto async = run(job, data, 2);
  CHECK(sync.staleness_max == 1);
  CHECK(sync.final_weights.values == async.final_weights.values);
}

TEST_CASE("pipelined sync on 2 and 3 shards ends with one server's weights, its clips binding on cut arrays") {
  // relu1.W (100,352 floats) is cut between shards, and a clip far below the gradients' norms binds on
  // every step: each step's clip needs the other shards' squares of that step's sum. A shard that has
  // stepped may tell its squares of the next step before the others have stepped.
  const auto data = synthetic_data(256, 784, 10, 25);
  auto job = pipelined_job(12);
  job.model.settings = {{"hidden_width", std::int64_t{128}}, {"dropout", 0.2}};
  job.optimizer.settings = {{"grad_clip", 0.05}};
  const auto one_server = run(job, data, 2);
  CHECK(one_server.staleness_max == 1);
  for (std::size_t servers : {2, 3}) {
    for (std::size_t threads : {2, 4}) {
      CAPTURE(servers);
      CAPTURE(threads);
      job.cluster.servers = servers;
      const auto sharded = run(job, data, threads);
      CHECK(sharded.final_weights.version == 12);
      CHECK(sharded.staleness_mean == doctest::Approx(one_server.staleness_mean));
      CHECK(sharded.final_weights.values == one_server.final_weights.values);
    }
  }
}

TEST_CASE("pipelined sync on 2 shards resumes from a checkpoint to the uninterrupted weights") {
  const auto data = synthetic_data(256, 784, 10, 26);
  auto job = pipelined_job(9);
  job.cluster.servers = 2;
  job.model.settings = {{"hidden_width", std::int64_t{128}}, {"dropout", 0.2}};
  job.training.checkpoint_every = 4;
  std::vector<TrainingCheckpoint> checkpoints;
  const auto uninterrupted = run(job, data, 2, std::nullopt, &checkpoints);
  REQUIRE(checkpoints.size() >= 2);
  const auto resumed = run(job, data, 2, checkpoints[0]);
  CHECK(resumed.final_weights.version == 9);
  CHECK(resumed.final_weights.values == uninterrupted.final_weights.values);
}

TEST_CASE("a signal in pipelined sync leaves no push unapplied, so each worker's stream stands where its steps put it") {
  // Worker 2 is slow: when the signal comes the others have sent their push for the step after the
  // stop while it is still computing the one before. The run ends at the furthest step a push feeds,
  // and every worker's data stream and dropout generator stand where that many gradients put them:
  // as at the end of a run planned to stop there.
  const auto data = synthetic_data(256, 784, 10, 23);
  auto job = pipelined_job(1000000);  // only the signal ends it
  job.cluster.straggler_delay = std::chrono::milliseconds{15};
  job.training.checkpoint_every = 20;  // a stopping point; the signal comes some steps after the first
  ActorConfig config(2);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  DriverHooks hooks;
  auto interrupt = std::make_shared<std::atomic<int>>(0);
  hooks.interrupt = interrupt;
  std::vector<TrainingCheckpoint> checkpoints;
  auto taken = std::make_shared<std::atomic<int>>(0);
  hooks.on_checkpoint = [&checkpoints, taken](const TrainingCheckpoint& checkpoint) {
    checkpoints.push_back(checkpoint);
    ++*taken;
  };
  std::thread signal([interrupt, taken] {
    for (int waited = 0; *taken == 0 && waited < 60000; waited += 5)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    interrupt->store(2);
  });
  auto interrupted = train_in_process(system, job, data, data, nullptr, hooks);
  signal.join();
  REQUIRE_MESSAGE(interrupted.ok(), (interrupted.ok() ? "" : interrupted.error()));
  CHECK(interrupted->interrupted_by == 2);
  REQUIRE(checkpoints.size() >= 2);
  const auto& stopped = checkpoints.back();
  const auto steps = stopped.version;
  MESSAGE("stopped at step " << steps);
  REQUIRE(steps > 20);
  CHECK(stopped.iteration == steps);
  CHECK(interrupted->gradients_per_worker == std::vector<std::uint64_t>(3, steps));

  std::vector<TrainingCheckpoint> planned_checkpoints;
  auto planned_job = job;
  planned_job.training.iterations = steps;
  planned_job.evaluation.frequency = 0;
  run(planned_job, data, 2, std::nullopt, &planned_checkpoints);
  REQUIRE(!planned_checkpoints.empty());
  const auto& planned = planned_checkpoints.back();
  REQUIRE(planned.workers.size() == 3);
  REQUIRE(stopped.workers.size() == 3);
  for (std::size_t k = 0; k < 3; ++k) {
    CAPTURE(k);
    CHECK(stopped.workers[k].data.epoch == planned.workers[k].data.epoch);
    CHECK(stopped.workers[k].data.cursor == planned.workers[k].data.cursor);
    CHECK(stopped.workers[k].dropout == planned.workers[k].dropout);
  }
}
