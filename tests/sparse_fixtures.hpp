// Sparse data sets and jobs the sparse actor tests share: a learnable rule over token ids, built in memory.
#pragma once

#include <algorithm>
#include <cmath>
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

// data with two number columns added, unrelated to the class: "count", a whole number from 0 to 999 with
// a long tail as click logs' counts have, and "offset", uniform in [-1, 1).
inline std::shared_ptr<const SparseDataset> with_numbers(std::shared_ptr<const SparseDataset> data,
                                                         std::uint64_t seed) {
  auto numbered = std::make_shared<SparseDataset>(*data);
  numbered->number_names = {"count", "offset"};
  Random rng(seed);
  for (std::size_t e = 0; e < numbered->count; ++e) {
    numbered->numbers.push_back(static_cast<float>(rng.below(10) * rng.below(10) * rng.below(10)));
    numbered->numbers.push_back(static_cast<float>(2.0 * rng.uniform() - 1.0));
  }
  return numbered;
}

// A class that only a number tells: "level" is uniform in [0, 3) and the class is its whole part. A
// decoy number ("decoy", uniform in [0, 3)) and an id field of ids drawn apart from the class carry
// nothing, so a model that ignores the numbers is left with the majority class.
inline std::shared_ptr<const SparseDataset> level_task(std::size_t count, std::uint64_t seed) {
  auto data = std::make_shared<SparseDataset>();
  data->count = count;
  data->id_fields.resize(1);
  data->id_fields[0].name = "noise";
  data->number_names = {"decoy", "level"};
  data->class_names = {"0", "1", "2"};
  data->origin = "memory";
  Random rng(seed);
  for (std::size_t e = 0; e < count; ++e) {
    data->id_fields[0].ids.push_back(rng.below(20));
    data->id_fields[0].offsets.push_back(data->id_fields[0].ids.size());
    const double level = 3.0 * rng.uniform();
    data->numbers.push_back(static_cast<float>(3.0 * rng.uniform()));
    data->numbers.push_back(static_cast<float>(level));
    data->labels.push_back(static_cast<std::uint32_t>(std::min(2.0, std::floor(level))));
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
