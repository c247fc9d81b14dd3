// Section 8: the same MLP trained by PyTorch, each peer a separate python3 process (bench/peers/):
// one process on 1 and 2 threads (torch_mlp.py), DistributedDataParallel with 2 processes
// (torch_ddp.py) and a torch.distributed.rpc parameter server with 2 trainers, sync and async
// (torch_rpc_ps.py), each beside psgrad's matching runs, and the time each needs to 0.85 dev accuracy.
#pragma once

#include "bench/bench_context.hpp"
#include "bench/peer_scripts.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

// Measures psgrad's own runs for its ratios, so it needs no other section. Without an importable
// torch it records kTorchSkipped in every peer row and returns normally.
void measure_peer_runs(BenchContext& context, Report& report);

}  // namespace psgrad::bench
