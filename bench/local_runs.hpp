// Section 3: sync and async training through train_in_process with 1, 2 and 4 workers, each as a
// rate, a speed-up over the single-thread baseline run in the same repeat, and a fraction of the
// compute ceiling.
#pragma once

#include "actors/evaluator.hpp"
#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

// One in-process run in a fresh actor system with one scheduler thread per core (psgrad's default).
Result<TrainingSummary> run_in_process(const TrainingJob& job, const DataSplit& data,
                                       ReportCallback on_report = nullptr);

// Iterations that keep `workers` busy for about effort.seconds_per_sample at the baseline's rate per
// core used (sync: iterations; async: iterations per worker, so the same number in both modes).
std::uint64_t iterations_for(const BenchContext& context, std::size_t workers);

// One in-process run as section 3 times it (evaluation only outside training_seconds); throws when
// the run fails.
TrainingSummary timed_local_run(const BenchContext& context, TrainingMode mode, std::size_t workers);
// The same on other data, for a given number of iterations (per worker, in async).
TrainingSummary timed_local_run(const BenchContext& context, const DataSplit& data, TrainingMode mode,
                                std::size_t workers, std::uint64_t iterations);

// Sets context.baselines.local_sync_2_workers and local_async_2_workers.
void measure_local_runs(BenchContext& context, Report& report);

}  // namespace psgrad::bench
