// Section 9's training rates: train_in_process on made-up click logs with 2 workers and 1, 2 and
// 4 table shards, sync and async; async with 1 table shard across processes over loopback; and
// PyTorch's EmbeddingBag model on the same keys (bench/peers/sparse_torch.py) for psgrad async's ratio
// to it.
#pragma once

#include "bench/bench_context.hpp"
#include "bench/report.hpp"
#include "bench/sparse_jobs.hpp"

namespace psgrad::bench {

// Rows: sparse.samples_per_s.local_<K>_shards.<mode>, sparse.samples_per_s.loopback_3_processes and
// sparse.loopback_vs_local, sparse.torch_samples_per_s (.t1, .t2) and sparse.psgrad_async_vs_torch.
void measure_sparse_training_runs(const BenchContext& context, const SparseEffort& effort, Report& report);

}  // namespace psgrad::bench
