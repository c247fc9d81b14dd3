// Everything needed to continue a run exactly where it stopped: weights, optimizer state, counters,
// every worker's data-stream position and dropout generator, the training data it was written on, and,
// for a model with embedding tables, the tables with their row optimizers' state as each table shard
// held its part of them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model/data_fingerprint.hpp"
#include "model/minibatcher.hpp"
#include "model/optimizer.hpp"
#include "model/random.hpp"
#include "model/table_state.hpp"

namespace psgrad {

struct WorkerStreamState {
  std::uint32_t worker = 0;
  Minibatcher::Position data;
  Random::State dropout{};
};

// One table shard's part of every table: the keys k % count == index, after `version` steps.
struct ShardTablesState {
  std::uint32_t index = 0;
  std::uint32_t count = 1;
  std::uint64_t version = 0;
  std::vector<TableState> tables;  // per table, in field order
};

// A checkpoint's tables part.
struct CheckpointTables {
  std::string row_optimizer;             // RowOptimizer::name() of the tables' optimizer
  std::vector<ShardTablesState> shards;  // in index order, one per shard of the run that wrote it
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
  // Training examples consumed and seconds trained up to here, over every run it continues: a resumed
  // run's progress carries on from them. Zero in files written before checkpoints held them.
  std::uint64_t samples = 0;
  double wall_seconds = 0.0;
  // The model's tables (model/checkpoint_tables.hpp); none for a model without tables.
  std::optional<CheckpointTables> tables;
};

}  // namespace psgrad
