// Everything needed to continue a run exactly where it stopped: weights, optimizer state, counters,
// and every worker's data-stream position and dropout generator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

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
};

}  // namespace psgrad
