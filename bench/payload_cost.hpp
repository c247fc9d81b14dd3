// Part of section 4: the CPU time of turning one Weights payload into bytes and back with CAF's
// binary serializer, as every message between processes pays it.
#pragma once

#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

void measure_payload_cost(BenchContext& context, Report& report);

}  // namespace psgrad::bench
