// How much memory a run's process will need, estimated from its config before anything is allocated,
// and the one-line refusal when that is more than the machine has.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/named_datasets.hpp"
#include "model/result.hpp"

namespace psgrad {

// What one process of a run holds.
enum class ProcessRole {
  whole_run,                    // `train`: the server, every worker and the evaluator
  server,                       // `serve`: the server, driver and evaluator; the workers are elsewhere
  server_and_worker_processes,  // `train --processes`: the server here, and each worker a process here too
  worker,                       // `work`: one worker
  shard,                        // `shard`: one server shard, drawn from the whole initial model
};

// One cause of memory use, named by the settings that size it.
struct MemoryPart {
  std::string what;  // "activation buffers: training.batch_size 128 x 2350 floats per row, for 2 workers"
  double bytes = 0;  // a double: a wild config's estimate may not fit 64 bits
};

struct MemoryEstimate {
  std::vector<MemoryPart> parts;
  double total_bytes() const;
  const MemoryPart& largest() const;
};

// Parameters (weights, gradients, optimizer moments, each worker's model copy and buffer pools),
// activation and minibatch buffers (batch x widths per worker, and the evaluator's), the data set
// (once per process that loads it), and each process's and thread's own overhead.
Result<MemoryEstimate> estimate_memory(const Config& config, const DataShape& data, ProcessRole role);

// "<config>: needs 2.9 TiB; this machine has 24 GiB; 2.8 TiB of it for <the largest part>" when the
// estimate exceeds machine_bytes.
// holder says whose limit machine_bytes is, as memory_limit() does ("this machine has").
Status check_memory(const Config& config, const DataShape& data, ProcessRole role, std::uint64_t machine_bytes,
                    const std::string& holder = "this machine has");

}  // namespace psgrad
