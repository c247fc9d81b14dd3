// Section 8's parts: PyTorch's data-parallel peers (DDP, and a parameter server over
// torch.distributed.rpc) timed beside psgrad's matching runs, and their time to 0.85 dev accuracy.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "actors/training_job.hpp"
#include "bench/bench_context.hpp"
#include "bench/report.hpp"

namespace psgrad::bench {

// The data the whole section trains on: Fashion-MNIST when installed (the time to accuracy needs it),
// else the section 3 digits.
struct PeerData {
  std::string name;    // "fashion-mnist" or "mnist", as psgrad's data.name
  std::string folder;  // what the Python peers read
  DataSplit split;
};

// One of PyTorch's data-parallel peers and the psgrad mode it is the peer of.
struct ParallelPeer {
  const char* key;     // JSON: peer.<key>.*
  const char* script;  // in bench/peers/
  const char* mode_argument;  // --mode for the script, or nullptr
  TrainingMode psgrad_mode;
  const char* label;
};

inline const std::vector<ParallelPeer>& parallel_peers() {
  static const std::vector<ParallelPeer> peers = {
      {"torch_ddp", "torch_ddp.py", nullptr, TrainingMode::sync, "PyTorch DDP (gloo), 2 processes"},
      {"torch_rpc_sync", "torch_rpc_ps.py", "sync", TrainingMode::sync, "PyTorch RPC parameter server, sync, 2 trainers"},
      {"torch_rpc_async", "torch_rpc_ps.py", "async", TrainingMode::async,
       "PyTorch RPC parameter server, async, 2 trainers"},
  };
  return peers;
}

// The script's arguments shared by timed and accuracy runs: data, batch per worker, the mode.
std::vector<std::string> parallel_peer_arguments(const ParallelPeer& peer, const BenchContext& context,
                                                 const PeerData& data);

// Throughput rows, psgrad's local and --processes runs alternated with the peers in every repeat, and
// the paired ratios (none when `reference_blas`). Returns psgrad's local async 2-worker rate.
Stats measure_parallel_peers(BenchContext& context, Report& report, const PeerData& data, bool reference_blas);

// Seconds to 0.85 dev accuracy on Fashion-MNIST for psgrad sync and async and each peer; rows that say
// "skipped" when the data is the digits.
void measure_peer_accuracy(BenchContext& context, Report& report, const PeerData& data);

// The rows of both parts, empty, with `note` (torch not importable).
void record_parallel_peers_skipped(Report& report, const std::string& note);

}  // namespace psgrad::bench
