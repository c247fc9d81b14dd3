// Sparse data sets and jobs the sparse actor tests share: a learnable rule over token ids, built in memory.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/job.hpp"
#include "model/murmurhash3.hpp"
#include "model/string_hash.hpp"
#include "model/random.hpp"
#include "model/sparse_dataset.hpp"

namespace psgrad::testing {

// Each token has a hidden colour (its number mod 3); an example's tokens (1 to 4, drawn from `vocabulary`
// tokens) share one colour, its class. A second field holds a distractor id unrelated to the class.
// Token numbers start at `first_token`, so a set can be made of tokens another never saw.
inline std::shared_ptr<const SparseDataset> colour_task(std::size_t count, std::uint64_t seed,
                                                        std::uint64_t first_token = 0,
                                                        std::uint64_t vocabulary = 60) {
  auto data = std::make_shared<SparseDataset>();
  data->count = count;
  data->id_fields.resize(2);
  data->id_fields[0].name = "tokens";
  data->id_fields[1].name = "distractor";
  data->class_names = {"0", "1", "2"};
  data->origin = "memory";
  Random rng(seed);
  for (std::size_t e = 0; e < count; ++e) {
    const auto colour = static_cast<std::uint64_t>(rng.below(3));
    const std::size_t length = 1 + rng.below(4);
    auto& tokens = data->id_fields[0];
    for (std::size_t i = 0; i < length; ++i) {
      const std::uint64_t number = first_token + 3 * rng.below(vocabulary / 3) + colour;
      tokens.ids.push_back(string_hash("token" + std::to_string(number)));
    }
    tokens.offsets.push_back(tokens.ids.size());
    auto& distractor = data->id_fields[1];
    distractor.ids.push_back(rng.below(10));
    distractor.offsets.push_back(distractor.ids.size());
    data->labels.push_back(static_cast<std::uint32_t>(colour));
  }
  return data;
}

// hashembed_mlp.v1 with small tables for colour_task, Adam.v1 at learn_rate 0.01.
inline TrainingJob sparse_job(TrainingMode mode, std::size_t workers, std::size_t shards, std::uint64_t iterations) {
  TrainingJob job;
  job.model.architecture = "hashembed_mlp.v1";
  job.model.settings = {{"embedding_widths", std::vector<std::int64_t>{8, 4}},
                        {"embedding_rows", std::vector<std::int64_t>{500, 50}},
                        {"hidden_width", std::int64_t{16}},
                        {"dropout", 0.2}};
  job.optimizer.settings = {{"learn_rate", 0.01}};
  job.cluster.mode = mode;
  job.cluster.num_workers = workers;
  job.cluster.servers = shards;
  job.training.iterations = iterations;
  job.training.batch_size = 16;
  job.training.seed = 3;
  job.evaluation.batch_size = 64;
  job.evaluation.frequency = 1000000;  // only the final evaluation
  return job;
}

}  // namespace psgrad::testing
