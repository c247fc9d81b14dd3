// Section 9's run across processes: the click logs the local rows train on, written as JSON Lines with a
// config of the same job, and `psgrad train --processes` on them (a server process, one process per
// table shard and one per worker, over loopback).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "actors/training_job.hpp"
#include "bench/sparse_data.hpp"

namespace psgrad::bench {

// Rows drawn as click_dataset(rows, seed) draws them.
struct ClickRows {
  std::size_t rows = 0;
  std::uint64_t seed = 0;
};

class SparseLoopbackRun {
 public:
  // Writes the train and dev rows and `job` as a config over them (its [data.columns] C1 ... C26, as
  // "ids") to a temporary folder; throws when they cannot be written.
  SparseLoopbackRun(std::string psgrad_path, const TrainingJob& job, ClickRows train, ClickRows dev);

  // One run of `iterations`: samples per training second, from psgrad's summary line, so starting the
  // processes, reading the files and joining are not part of it. Throws when the run fails or leaves a
  // process behind. Across processes with `train --processes`; else the same command in one process.
  double run(std::uint64_t iterations, bool processes = true) const;

  const std::string& config_path() const { return config_path_; }

 private:
  std::string psgrad_path_;
  ScratchFolder folder_;
  std::string config_path_;
};

}  // namespace psgrad::bench
