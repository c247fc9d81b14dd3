#include "bench/sparse_section.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "bench/sparse_accuracy.hpp"
#include "bench/sparse_bytes.hpp"
#include "bench/sparse_shard_cost.hpp"
#include "bench/sparse_training_runs.hpp"

namespace psgrad::bench {

void measure_sparse_section(const BenchContext& context, Report& report) {
  auto effort = context.options.quick ? SparseEffort::quick() : SparseEffort::full();
  effort.quiet_wait_seconds = std::min(effort.quiet_wait_seconds, context.effort.quiet_wait_seconds);
  // Each part times itself in the log, so a section over its minute shows which part grew.
  auto part = [](const char* name, auto&& measure) {
    const auto start = Clock::now();
    measure();
    fmt::print(stderr, "psgrad_bench: 9 sparse: {} in {:.1f} s\n", name, seconds_since(start));
  };
  part("shard rates and row cost", [&] { measure_shard_cost(effort, report); });
  part("bytes per step", [&] { measure_sparse_bytes(effort, report); });
  part("training rates", [&] { measure_sparse_training_runs(context, effort, report); });
  part("Debian packages accuracy", [&] { measure_debian_packages_accuracy(context, effort, report); });
}

}  // namespace psgrad::bench
