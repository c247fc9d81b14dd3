// Section 4: `psgrad train --processes` (one server process, two worker processes over loopback),
// each run divided by a local two-worker run taken right before it, the bytes one optimizer step
// moves, and what encoding them costs.
#pragma once

#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

// Needs section 2's baseline (for the iterations); sets context.process_memory.
void measure_multiprocess_runs(BenchContext& context, Report& report);

// The "samples/s" figure of psgrad's summary line, or a negative number when there is none.
double parse_samples_per_second(const std::string& output);

}  // namespace psgrad::bench
