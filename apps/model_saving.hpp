// Saves a run's final weights as a model file (io/model_file) with its config and layout.
#pragma once

#include <string>

#include "payloads/messages.hpp"
#include "apps/run_setup.hpp"
#include "model/result.hpp"

namespace psgrad {

// The run's training data gives the input width, classes and image shape the model was trained for.
Status save_model(const std::string& path, const PreparedRun& run, const Weights& weights);

}  // namespace psgrad
