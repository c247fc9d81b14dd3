// Section 6: wall seconds until the dev accuracy first reaches 0.85, sync and async, 2 workers.
#pragma once

#include <cstdint>
#include <optional>

#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

constexpr double kTargetAccuracy = 0.85;

// The first evaluation at or above kTargetAccuracy: when its snapshot was taken, and how far training was.
struct AccuracyHit {
  double wall_seconds = 0.0;
  std::uint64_t iteration = 0;  // iterations (sync) or server steps (async)
  std::uint64_t samples = 0;
};

struct AccuracyRun {
  std::optional<AccuracyHit> hit;  // none: the run ended below the target
  double final_accuracy = 0.0;
};

// One in-process run of `job` on `data`, watching every evaluation report; throws when the run fails.
AccuracyRun run_to_accuracy(const TrainingJob& job, const DataSplit& data);

void measure_time_to_accuracy(BenchContext& context, Report& report);

}  // namespace psgrad::bench
