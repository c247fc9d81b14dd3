// Loads a model file and examples in any data format, and prints each one's predicted label and class
// probabilities as text, CSV or JSON.
#include "apps/predict_command.hpp"

#include <cstdio>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/data_source.hpp"
#include "io/model_scoring.hpp"
#include "io/prediction_inputs.hpp"
#include "io/saved_model.hpp"
#include "apps/cli_checks.hpp"
#include "apps/error_exit.hpp"
#include "apps/sparse_scoring.hpp"
#include "io/model_file.hpp"

namespace psgrad {

namespace {

// One example's line (text, CSV) or object (JSON): the example's row in the input (from 0), the
// predicted label, the probabilities. JSON's keys are "row" and "predicted" so that jq's shorthand
// {row,predicted} works: jq 1.6 parses {label} as its label keyword, and index is one of its builtins.
std::string text_line(std::size_t row, const Prediction& prediction) {
  std::string line = fmt::format("{}\t{}", row, prediction.label);
  for (const float p : prediction.probabilities) line += fmt::format("\t{:.4f}", p);
  return line + "\n";
}

std::string csv_line(std::size_t row, const Prediction& prediction) {
  std::string line = fmt::format("{},{}", row, prediction.label);
  // fmt writes the shortest digits that read back as the same float.
  for (const float p : prediction.probabilities) line += fmt::format(",{}", p);
  return line + "\n";
}

std::string csv_header(std::size_t classes) {
  std::string header = "row,predicted";
  for (std::size_t c = 0; c < classes; ++c) header += fmt::format(",p{}", c);
  return header + "\n";
}

nlohmann::json json_object(std::size_t row, const Prediction& prediction) {
  nlohmann::json probabilities = nlohmann::json::array();
  // Through the float's shortest digits, so JSON shows 0.31433332 rather than the double 0.31433331966400146.
  for (const float p : prediction.probabilities) probabilities.push_back(std::stod(fmt::format("{}", p)));
  return {{"row", row}, {"predicted", prediction.label}, {"probabilities", std::move(probabilities)}};
}

}  // namespace

Command add_predict_command(CLI::App& app) {
  auto options = std::make_shared<PredictOptions>();
  auto* command = app.add_subcommand("predict", "Print a saved model's predicted label and class probabilities for "
                                                "each example");
  command->add_option("--model", options->model_path, "model file written by --save")->required();
  command->add_option("input", options->input_path,
                      "examples: an IDX images file (optionally .gz), a .npy array, an .npz (x_test, else x_train), a "
                      "CSV file (features, optionally the label in data.label_column), or a folder of IDX or .npy "
                      "files (its test part)")
      ->required();
  command->add_option("--format", options->format,
                      "text: row (from 0), predicted label and one probability per class, tab-separated; csv: the "
                      "same with a header row; json: one array of {row, predicted, probabilities}")
      ->check(CLI::IsMember({"text", "csv", "json"}));
  command->add_option("--scale", options->scale,
                      "multiply NumPy and CSV features by this (default: the model's data.scale)")
      ->check(above_zero());
  return {command, [options] { return run_predict_command(*options); }, true};
}

int run_predict_command(const PredictOptions& options) {
  if (model_file_has_tables(options.model_path)) return run_sparse_predict(options);
  const ErrorExit error{"psgrad predict"};
  auto loaded = load_saved_model(options.model_path);
  if (!loaded) return error.refused(loaded.error());
  auto source = data_source(loaded->config.data);
  if (options.scale) source.scale = *options.scale;
  auto inputs = read_prediction_inputs(options.input_path, loaded->header.input_width, source);
  if (!inputs) return error.refused(inputs.error());
  const auto fits = inputs->image_rows
                        ? check_input_width(*loaded, inputs->image_rows, inputs->image_cols, options.input_path)
                        : check_input_width(*loaded, inputs->width, options.input_path);
  if (!fits) return error.refused(fits.error());
  const auto batch_size = static_cast<std::size_t>(loaded->config.evaluation.batch_size);
  const auto predictions = predict(loaded->model, inputs->inputs.data(), inputs->count, batch_size);
  std::string out;
  if (options.format == "json") {
    nlohmann::json all = nlohmann::json::array();
    for (std::size_t i = 0; i < predictions.size(); ++i) all.push_back(json_object(i, predictions[i]));
    out = all.dump() + "\n";
  } else {
    if (options.format == "csv") out = csv_header(loaded->header.num_classes);
    for (std::size_t i = 0; i < predictions.size(); ++i)
      out += options.format == "csv" ? csv_line(i, predictions[i]) : text_line(i, predictions[i]);
  }
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace psgrad
