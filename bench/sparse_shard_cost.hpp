// Section 9's table shard figures: one EmbeddingShard driven directly by pulls and pushes of realistic
// batches (128 click-log rows, Zipf ids, tables 32 and 64 wide), and a step's server work per touched
// row against a plain loop doing the same copies and lazy Adam arithmetic on the same rows held in
// arrays.
#pragma once

#include "bench/report.hpp"
#include "bench/sparse_jobs.hpp"

namespace psgrad::bench {

// Rows: sparse.rows_pulled_per_s_per_shard, sparse.rows_pushed_per_s_per_shard (width 32; .width_64 for
// 64), sparse.server_row_ns, sparse.plain_loop_row_ns, sparse.server_vs_plain_loop.
void measure_shard_cost(const SparseEffort& effort, Report& report);

}  // namespace psgrad::bench
