// `psgrad predict --model M INPUT [--format text|csv|json]`: each example's index, predicted label and
// class probabilities.
#pragma once

#include <optional>
#include <string>

#include "apps/command.hpp"

namespace psgrad {

struct PredictOptions {
  std::string model_path;
  std::string input_path;  // any data format: IDX images, .npy, .npz, CSV, a data folder
  std::string format = "text";
  std::optional<double> scale;  // replaces the model's data.scale for NumPy and CSV input
};

Command add_predict_command(CLI::App& app);
int run_predict_command(const PredictOptions& options);

}  // namespace psgrad
