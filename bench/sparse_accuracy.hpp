// Section 9's accuracy on real data: `psgrad data debian-packages` output split as data.dev_fraction 0.2
// splits it, hashembed_mlp.v1 trained on it by train_in_process and by PyTorch
// (bench/peers/debian_packages_accuracy.py) on the same keys, next to the majority class.
#pragma once

#include "bench/bench_context.hpp"
#include "bench/report.hpp"
#include "bench/sparse_jobs.hpp"

namespace psgrad::bench {

// Rows: sparse.debian_packages.{psgrad_accuracy,torch_accuracy,majority_accuracy}; without apt's package
// lists every row is empty with a note saying why.
void measure_debian_packages_accuracy(const BenchContext& context, const SparseEffort& effort, Report& report);

}  // namespace psgrad::bench
