// Section 7: peak resident memory of this process and of the multi-process run's processes, and a
// check that the data set is loaded once per process however many workers use it.
#pragma once

#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

// This process's peak RSS so far (getrusage ru_maxrss), in KiB.
long own_peak_rss_kb();

// Needs context.process_memory from section 4 (when it ran).
void measure_memory_use(BenchContext& context, Report& report, long rss_after_loading_kb);

}  // namespace psgrad::bench
