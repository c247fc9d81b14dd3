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
