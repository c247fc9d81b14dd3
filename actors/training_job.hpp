// What the participants of a run build from its job: the model, the optimizer, and their seeds.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/job.hpp"
#include "model/model.hpp"
#include "model/optimizer.hpp"
#include "model/result.hpp"
#include "model/settings.hpp"

namespace psgrad {

// The model every participant builds: the server's is initialized from the run's seed.
Result<Model> build_model(const TrainingJob& job, std::size_t input_width, std::size_t output_width);
Result<Model> build_initialized_model(const TrainingJob& job, std::size_t input_width,
                                      std::size_t output_width);
Result<std::unique_ptr<Optimizer>> build_optimizer(const TrainingJob& job, const ParameterLayout& layout);

// Worker k's data order and dropout masks come from their own streams of seed + k.
std::uint64_t worker_data_seed(std::uint64_t seed, std::size_t worker);
std::uint64_t worker_dropout_seed(std::uint64_t seed, std::size_t worker);

}  // namespace psgrad
