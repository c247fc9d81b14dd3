// Section 2: the plain single-thread loop (minibatch, forward/backward, Adam) with no actors: the
// rate every parallel configuration is compared to, and the cost of each part of one step.
#pragma once

#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

// Sets context.baselines.baseline_samples_per_second and compute_gradients_seconds.
void measure_baseline(BenchContext& context, Report& report);

}  // namespace psgrad::bench
