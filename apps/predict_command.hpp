// `psgrad predict --model M IMAGES.idx`: one predicted label per image, one per line.
#pragma once

#include <string>

#include "apps/command.hpp"

namespace psgrad {

struct PredictOptions {
  std::string model_path;
  std::string images_path;  // an IDX image file, raw or .gz
};

Command add_predict_command(CLI::App& app);
int run_predict_command(const PredictOptions& options);

}  // namespace psgrad
