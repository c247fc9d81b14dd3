// Per-worker statistics of a run: mean compute and wait times measured by the workers, staleness histogram.
#include <doctest/doctest.h>

#include <numeric>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "tests/actor_fixtures.hpp"
#include "tests/local_run.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

TrainingSummary train(const TrainingJob& job, std::shared_ptr<const Dataset> data) {
  return train_locally(job, data, data);
}

}  // namespace

TEST_CASE("per-worker times: a straggler computes longer, the others wait for it") {
  const auto data = synthetic_data(320, 12, 4, 24);
  auto job = small_job(TrainingMode::sync, 2, 8);
  job.cluster.straggler_delay = std::chrono::milliseconds{10};
  const auto summary = train(job, data);
  REQUIRE(summary.workers.compute_ms_mean.size() == 2);
  REQUIRE(summary.workers.wait_ms_mean.size() == 2);
  CHECK(summary.workers.compute_ms_mean[1] >= 10.0);  // its delay is part of its compute time
  CHECK(summary.workers.compute_ms_mean[0] < summary.workers.compute_ms_mean[1]);
  CHECK(summary.workers.wait_ms_mean[0] > summary.workers.wait_ms_mean[1]);
  // Sync gradients are never stale: every one lands in bucket 0.
  CHECK(summary.workers.staleness_histogram == std::vector<std::uint64_t>{8});
}

TEST_CASE("the staleness histogram counts every applied async gradient once") {
  const auto data = synthetic_data(320, 12, 4, 25);
  const auto summary = train(small_job(TrainingMode::async, 3, 10), data);
  CHECK(total(summary.workers.staleness_histogram) == summary.steps);
}
