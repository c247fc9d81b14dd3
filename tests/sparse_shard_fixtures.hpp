// For the sparse actor tests: a job's model built for a data set, and the job's table shards.
#pragma once

#include <doctest/doctest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/embedding_shard.hpp"
#include "actors/table_parts.hpp"
#include "model/sparse_model.hpp"

namespace psgrad::testing {

inline SparseModel model_for(const TrainingJob& job, const SparseDataset& data) {
  auto model = SparseModel::build_for_data(job.model.architecture, job.model.settings, data, "data");
  REQUIRE(model.ok());
  return std::move(model).value();
}

// Shard `index` of `count` over one table of width 2, lazy Adam without clipping (no squares to exchange),
// two workers, sync.
inline EmbeddingShardSetup one_table_shard_setup(std::uint32_t index, std::uint32_t count) {
  EmbeddingShardSetup setup;
  setup.index = index;
  setup.count = count;
  EmbeddingTableSettings table;
  table.width = 2;
  table.init_seed = 5;
  setup.tables.push_back(table);
  setup.run_optimizer.settings = {{"grad_clip", 0.0}};
  setup.workers = 2;
  return setup;
}

// Table shards 0..count-1 of `job` at step 0, with the default row optimizer.
inline std::vector<EmbeddingShardActor> spawn_table_shards(caf::actor_system& system, const TrainingJob& job,
                                                           const SparseModel& model, std::uint32_t count) {
  auto setup = embedding_shard_setup(job, model, TableOptimizerChoice{}, 0);
  std::vector<EmbeddingShardActor> shards;
  for (std::uint32_t s = 0; s < count; ++s) {
    setup.index = s;
    auto shard = spawn_embedding_shard(system, setup);
    REQUIRE(shard.ok());
    shards.push_back(std::move(shard).value());
  }
  return shards;
}

}  // namespace psgrad::testing
