// Async checkpoints: one starts at every step while earlier ones are still collected, and a run resumes
// from any of them.
#include <doctest/doctest.h>

#include <vector>

#include "tests/actor_fixtures.hpp"
#include "tests/local_run.hpp"

using namespace psgrad;
using namespace psgrad::testing;

TEST_CASE("async checkpoints that overlap each hold the server's state and every worker's stream") {
  const auto data = synthetic_data(320, 12, 4, 9);
  auto job = small_job(TrainingMode::async, 2, 20);
  job.training.checkpoint_every = 1;  // a checkpoint starts at every step, before the last is collected
  std::vector<TrainingCheckpoint> checkpoints;
  const auto summary = train_locally(job, data, 2, std::nullopt, &checkpoints);
  CHECK(summary.steps == 40);
  REQUIRE(checkpoints.size() >= 20);
  for (const auto& checkpoint : checkpoints) {
    CAPTURE(checkpoint.iteration);
    CHECK(checkpoint.workers.size() == 2);
    CHECK(checkpoint.version >= checkpoint.iteration);  // the server's state is read after the step began it
    CHECK(checkpoint.weights.size() == summary.final_weights.values.size());
  }
}

TEST_CASE("an async run resumed from a checkpoint taken halfway ends at the run's total steps") {
  const auto data = synthetic_data(320, 12, 4, 10);
  auto job = small_job(TrainingMode::async, 2, 20);
  job.training.checkpoint_every = 10;
  std::vector<TrainingCheckpoint> checkpoints;
  train_locally(job, data, 2, std::nullopt, &checkpoints);
  REQUIRE(checkpoints.size() >= 2);
  const auto& halfway = checkpoints[1];
  REQUIRE(halfway.iteration == 20);
  const auto resumed = train_locally(job, data, 2, halfway);
  CHECK(resumed.steps == 40);
  CHECK(resumed.final_weights.version == halfway.version + 20);
  CHECK(total(resumed.gradients_per_worker) == 20);
}

TEST_CASE("an ssp run resumes from its checkpoint and keeps its bound") {
  const auto data = synthetic_data(320, 12, 4, 11);
  auto job = small_job(TrainingMode::ssp, 2, 20);
  job.cluster.staleness = 1;
  job.training.checkpoint_every = 10;
  std::vector<TrainingCheckpoint> checkpoints;
  train_locally(job, data, 2, std::nullopt, &checkpoints);
  REQUIRE_FALSE(checkpoints.empty());
  const auto resumed = train_locally(job, data, 2, checkpoints.front());
  CHECK(resumed.steps == 40);
  CHECK(resumed.max_clock_lead <= 1);
}
