// The sparse section's models and how hard it works: hashembed_mlp.v1 over the 26 click-log fields, and
// over the four columns of `psgrad data debian-packages`; small sizes in --quick.
#pragma once

#include <cstddef>
#include <cstdint>

#include "actors/training_job.hpp"

namespace psgrad::bench {

struct SparseEffort {
  std::size_t repeats = 2;
  std::size_t loopback_repeats = 3;   // the ratio across processes spreads most: its median of three
  double seconds_per_run = 1.0;       // each timed training run, and each shard timing
  std::size_t click_train_rows = 50000;
  std::size_t click_dev_rows = 2000;
  std::size_t shard_batches = 64;     // distinct batches cycled through when driving a shard
  std::size_t debian_packages = 0;    // 0: every package; else the first ones of the file
  double debian_epochs = 2.0;
  double quiet_wait_seconds = 5.0;    // before each repeat of the training runs
  static SparseEffort full() { return {}; }
  static SparseEffort quick() { return {1, 1, 0.05, 4000, 500, 8, 3000, 0.5, 0.0}; }
};

// hashembed_mlp.v1, sum pooling (PyTorch's EmbeddingBag(mode="sum") is its peer), tables of `width` and
// `rows` for each of the 26 categorical click fields, 2 workers, batch 128, Adam.v1 defaults.
TrainingJob click_job(std::size_t width, std::uint64_t rows);

// hashembed_mlp.v1, mean pooling, over depends, maintainer, name_parts and summary, for the packages'
// 58 sections; 2 workers, 2 shards, async.
TrainingJob debian_packages_job();

}  // namespace psgrad::bench
