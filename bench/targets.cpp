// Medians are compared: the spread is in the table for judging how close a call is.
#include "bench/targets.hpp"

namespace psgrad::bench {

namespace {

void check(Report& report, const char* name, const char* key, double threshold, bool is_upper_bound = false) {
  // A row without samples (a skipped peer, a ratio whose other side did not run) is not a miss.
  const Row* row = report.find(key);
  if (row && !row->stats.samples.empty()) report.add_target({name, row->stats.median, threshold, is_upper_bound});
}

}  // namespace

void check_targets(Report& report) {
  check(report, "local sync, 2 workers: speed-up over baseline", "local.sync.w2.speedup", 1.7);
  check(report, "local async, 2 workers: speed-up over baseline", "local.async.w2.speedup", 1.8);
  check(report, "local sync, 1 worker through the actors / baseline", "local.sync.w1.speedup", 0.9);
  check(report, "local async, 1 worker through the actors / baseline", "local.async.w1.speedup", 0.9);
  check(report, "local sync, 4 workers / 2 workers", "local.sync.w4_over_w2", 0.95);
  check(report, "local async, 4 workers / 2 workers", "local.async.w4_over_w2", 0.95);
  check(report, "local async, 2 workers: FLOP rate / (ceiling x 2 cores)", "local.async.w2.fraction_of_ceiling", 0.7);
  check(report, "multi-process sync / local sync (2 workers)", "processes.sync.w2.ratio_to_local", 0.7);
  check(report, "multi-process async / local async (2 workers)", "processes.async.w2.ratio_to_local", 0.8);
  check(report, "multi-process async pipelined / local async (2 workers)", "processes.async_pipeline.w2.ratio_to_local",
        0.8);
  check(report, "server step / one worker's compute_gradients", "server.fraction_of_gradient", 0.05, true);
  check(report, "async 2 workers >= 3x the best PyTorch rate", "peer.torch.ratio", 3.0);
  // PyTorch's own data-parallel peers (section 8): sync against DDP, async against the RPC server.
  check(report, "psgrad sync in one process >= 4x PyTorch DDP", "peer.torch_ddp.ratio_local", 4.0);
  check(report, "psgrad sync --processes >= 4x PyTorch DDP", "peer.torch_ddp.ratio_processes", 4.0);
  check(report, "psgrad async in one process >= 5x the PyTorch RPC server (async)", "peer.torch_rpc_async.ratio_local",
        5.0);
  check(report, "psgrad async --processes >= 5x the PyTorch RPC server (async)",
        "peer.torch_rpc_async.ratio_processes", 5.0);
  // Sparse models (section 9): a shard's step against a plain loop over the same rows, and PyTorch.
  check(report, "table shard step / plain loop, per touched row", "sparse.server_vs_plain_loop", 2.0, true);
  check(report, "psgrad sparse async >= 2x PyTorch EmbeddingBag", "sparse.psgrad_async_vs_torch", 2.0);
  check(report, "sparse async across processes / in one process", "sparse.loopback_vs_local", 0.7);
}

}  // namespace psgrad::bench
