// Section 6: wall seconds until the dev accuracy first reaches 0.85, sync and async, 2 workers.
#pragma once

#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

constexpr double kTargetAccuracy = 0.85;

void measure_time_to_accuracy(BenchContext& context, Report& report);

}  // namespace psgrad::bench
