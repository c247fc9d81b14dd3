// Section 9: sparse models. Table shards driven directly, their step against a plain loop, bytes per
// step at two table sizes, local training rates with 1, 2 and 4 shards, PyTorch's EmbeddingBag peer and
// dev accuracy on the Debian package lists. It needs no other section.
#pragma once

#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

void measure_sparse_section(const BenchContext& context, Report& report);

}  // namespace psgrad::bench
