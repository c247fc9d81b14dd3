// `psgrad predict --model M IMAGES.idx`: one predicted label per image, one per line.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace psgrad {

struct PredictOptions {
  std::string model_path;
  std::string images_path;  // an IDX image file, raw or .gz
};

CLI::App* add_predict_command(CLI::App& app, PredictOptions& options);
int run_predict_command(const PredictOptions& options);

}  // namespace psgrad
