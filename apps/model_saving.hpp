// Saves a run's final weights as a model file (io/model_file) with its config and layout.
#pragma once

#include <cstdint>
#include <string>

#include "payloads/messages.hpp"
#include "apps/run_setup.hpp"
#include "io/model_file.hpp"
#include "model/parameter_layout.hpp"
#include "model/result.hpp"

namespace psgrad {

// What a model file says besides the weights: the run's training data gives the input width, classes
// and image shape the model was trained for; the config and layout are the run's.
ModelFileHeader model_file_header(const PreparedRun& run, std::uint64_t weights_version);

// Refuses weights that do not fit the header's layout or are not finite (training diverged), else
// writes the model file.
Status save_model(const std::string& path, const ModelFileHeader& header, const ParameterLayout& layout,
                  const float* weights, std::size_t weight_count);
Status save_model(const std::string& path, const PreparedRun& run, const Weights& weights);

}  // namespace psgrad
