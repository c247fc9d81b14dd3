// Section 9's bytes: what one worker's step of the click model moves (its pull, the rows that answer it,
// its row push, the dense weights and gradient), against what it would move with every table sent whole,
// at two table sizes, so that bytes are seen to follow the keys a batch touches and not the tables' size.
#pragma once

#include "bench/report.hpp"
#include "bench/sparse_jobs.hpp"

namespace psgrad::bench {

// Rows: sparse.bytes_per_step, sparse.dense_equivalent_bytes_per_step, sparse.unique_keys_per_step
// (tables of 2^16 rows, the model the section trains) and the same under sparse.table_2_24.
void measure_sparse_bytes(const SparseEffort& effort, Report& report);

}  // namespace psgrad::bench
