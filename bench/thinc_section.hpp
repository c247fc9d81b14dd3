// psgrad_bench section 10: a model in Thinc's language (configs/debian-packages-textcnn.cfg, a text
// classifier on the Debian packages' summaries) trained by psgrad with 1 and 2 workers, and by real
// Thinc on NumPy from the same config text, on the same examples and batches.
#pragma once

#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

void measure_thinc_section(const BenchContext& context, Report& report);

}  // namespace psgrad::bench
