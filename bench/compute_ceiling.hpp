// Section 1: how fast one core multiplies the MLP's own matrices with Eigen, the ceiling that the
// training rates are compared against, and the model's FLOPs per sample.
#pragma once

#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

// Sets context.baselines.ceiling_gflops.
void measure_compute_ceiling(BenchContext& context, Report& report);

}  // namespace psgrad::bench
