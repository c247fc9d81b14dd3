// Everything needed to continue a run exactly where it stopped: weights, optimizer state, counters,
// every worker's data-stream position and dropout generator, and the training data it was written on.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/data_fingerprint.hpp"
#include "model/minibatcher.hpp"
#include "model/optimizer.hpp"
#include "model/random.hpp"

namespace psgrad {

struct WorkerStreamState {
  std::uint32_t worker = 0;
  Minibatcher::Position data;
  Random::State dropout{};
};

struct TrainingCheckpoint {
  std::string config;           // the resolved TOML config of the run
  std::uint64_t iteration = 0;  // completed loop iterations (sync) or optimizer steps (async)
  std::uint64_t version = 0;    // optimizer steps
  std::uint64_t layout_hash = 0;
  std::vector<float> weights;
  OptimizerState optimizer;
  std::vector<WorkerStreamState> workers;
  // The training set the streams above index into; none in files written before checkpoints held it.
  std::optional<DataFingerprint> data;
};

}  // namespace psgrad
