// Shared pieces for the actor tests: a small synthetic data set, jobs, and the real-data location.
#pragma once

#include <cstdlib>
#include <memory>
#include <string>

#include "actors/training_job.hpp"
#include "model/dataset.hpp"
#include "model/parameter_layout.hpp"
#include "model/random.hpp"

namespace psgrad::testing {

// Separable-ish synthetic data: class c has its features centred on a class-specific pattern.
inline std::shared_ptr<const Dataset> synthetic_data(std::size_t count, std::size_t width,
                                                     std::size_t classes, std::uint64_t seed) {
  auto data = std::make_shared<Dataset>();
  data->count = count;
  data->width = width;
  data->num_classes = classes;
  data->image_rows = 1;
  data->image_cols = width;
  Random rng(seed);
  for (std::size_t i = 0; i < count; ++i) {
    const auto label = static_cast<std::uint8_t>(rng.below(classes));
    data->labels.push_back(label);
    for (std::size_t j = 0; j < width; ++j)
      data->inputs.push_back(static_cast<float>(rng.uniform() * 0.5 + ((j % classes) == label ? 0.5 : 0.0)));
    for (std::size_t c = 0; c < classes; ++c) data->targets.push_back(c == label ? 1.0f : 0.0f);
  }
  return data;
}

inline TrainingJob small_job(TrainingMode mode, std::size_t workers, std::uint64_t iterations) {
  TrainingJob job;
  job.model.settings = {{"hidden_width", std::int64_t{16}}, {"dropout", 0.2}};
  job.cluster.mode = mode;
  job.cluster.num_workers = workers;
  job.training.iterations = iterations;
  job.training.batch_size = 32;
  job.evaluation.batch_size = 64;
  job.evaluation.frequency = 1000000;  // only the final evaluation
  job.training.seed = 7;
  return job;
}

// The tutorial's model, 784-128-128-10: 118,282 floats in six arrays, relu1.W holding 85% of them.
inline ParameterLayout tutorial_layout() {
  ParameterLayout layout;
  layout.add("relu1", "W", 128, 784);
  layout.add("relu1", "b", 1, 128);
  layout.add("relu2", "W", 128, 128);
  layout.add("relu2", "b", 1, 128);
  layout.add("softmax", "W", 10, 128);
  layout.add("softmax", "b", 1, 10);
  return layout;
}

inline std::string data_dir() {
  if (const char* dir = std::getenv("PSGRAD_DATA")) return dir;
  return std::string(PSGRAD_SOURCE_DIR) + "/data";
}

}  // namespace psgrad::testing
