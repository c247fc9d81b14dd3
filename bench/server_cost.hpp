// Section 5: what one parameter-server step costs (sum two gradients, Adam, snapshot the weights)
// next to one worker's gradient at batch 128: the share of a step the workers wait for the server.
#pragma once

#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

// Needs context.baselines.compute_gradients_seconds.
void measure_server_cost(BenchContext& context, Report& report);

}  // namespace psgrad::bench
