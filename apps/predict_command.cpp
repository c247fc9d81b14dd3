// Loads a model file and an IDX image file and prints the argmax class of each image.
#include "apps/predict_command.hpp"

#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "io/idx.hpp"
#include "io/model_scoring.hpp"
#include "io/saved_model.hpp"

namespace psgrad {

Command add_predict_command(CLI::App& app) {
  auto options = std::make_shared<PredictOptions>();
  auto* command = app.add_subcommand("predict", "Print a saved model's predicted label for each image");
  command->add_option("--model", options->model_path, "model file written by --save")->required();
  command->add_option("images", options->images_path, "IDX image file (idx3-ubyte, optionally .gz)")->required();
  return {command, [options] { return run_predict_command(*options); }};
}

int run_predict_command(const PredictOptions& options) {
  auto loaded = load_saved_model(options.model_path);
  if (!loaded) {
    fmt::print(stderr, "psgrad predict: {}\n", loaded.error());
    return 2;
  }
  auto images = read_idx_images(options.images_path);
  if (!images) {
    fmt::print(stderr, "psgrad predict: {}\n", images.error());
    return 2;
  }
  if (auto fits = check_input_width(*loaded, images->rows, images->cols, options.images_path); !fits) {
    fmt::print(stderr, "psgrad predict: {}\n", fits.error());
    return 2;
  }
  const auto inputs = scaled_pixels(*images);
  const auto batch_size = static_cast<std::size_t>(loaded->config.evaluation.batch_size);
  std::string text;
  for (auto label : predict_labels(loaded->model, inputs.data(), images->count, batch_size))
    text += fmt::format("{}\n", label);
  std::fputs(text.c_str(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace psgrad
