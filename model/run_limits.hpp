// Upper bounds on a run's thread-like counts, shared by config validation, the command line and the
// server that admits workers.
#pragma once

#include <cstdint>

namespace psgrad {

// One server applies gradients one at a time: a step took 69 µs against a worker's 0.79 ms gradient,
// so about a dozen workers keep one server busy, and 64 shards (the most cluster.servers allows) well
// under a thousand. Every in-process worker is also a thread and a model copy of its own.
constexpr std::int64_t max_workers = 1024;
// Scheduler threads beyond the machine's cores only contend for them; 1024 is more than any
// machine's cores.
constexpr std::int64_t max_scheduler_threads = 1024;
// A run's optimizer steps (iterations, times the workers in async and ssp) are written to metrics
// files as JSON numbers, which readers hold as doubles: exact only up to 2^53.
constexpr std::uint64_t max_run_steps = std::uint64_t{1} << 53;

}  // namespace psgrad
