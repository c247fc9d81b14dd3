// Section 2: the plain single-thread loop (minibatch, forward/backward, Adam) with no actors: the
// rate every parallel configuration is compared to, and the cost of each part of one step.
#pragma once

#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

// Sets context.baselines.baseline_samples_per_second and compute_gradients_seconds.
void measure_baseline(BenchContext& context, Report& report);

// One timed run of the plain single-thread loop (after a few warm-up steps), in samples/s: the
// baseline again, for runs that are divided by it pair by pair.
double plain_loop_samples_per_second(const BenchContext& context, std::size_t steps);

}  // namespace psgrad::bench
