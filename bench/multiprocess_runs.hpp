// Section 4: `psgrad train --processes` (one server process, two worker processes over loopback),
// each run divided by a local two-worker run taken right before it, the bytes one optimizer step
// moves, and what encoding them costs.
#pragma once

#include <cstdint>
#include <string>

#include "bench/bench_context.hpp"
#include "bench/captured_run.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

// Needs section 2's baseline (for the iterations); sets context.process_memory.
void measure_multiprocess_runs(BenchContext& context, Report& report);

// The "samples/s" figure of psgrad's summary line, or a negative number when there is none.
double parse_samples_per_second(const std::string& output);

struct ProcessesRun {
  double samples_per_second = 0.0;  // from the summary line: start-up and joining are not in it
  ChildRun run;
};

// One `psgrad train --processes` run with two workers on the named data set, evaluation only at the
// start and the end; throws when it fails or leaves a worker process behind.
ProcessesRun run_psgrad_processes(const BenchContext& context, TrainingMode mode, bool pipeline,
                                  std::uint64_t iterations, const std::string& data_name = "mnist");

}  // namespace psgrad::bench
