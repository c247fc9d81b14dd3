// Loads a model file and examples in any data format (a model with tables: its named columns), and
// prints each one's predicted label and class probabilities as text, CSV or JSON.
#include "apps/predict_command.hpp"

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/data_source.hpp"
#include "io/model_scoring.hpp"
#include "io/prediction_inputs.hpp"
#include "io/saved_model.hpp"
#include "apps/cli_checks.hpp"
#include "apps/error_exit.hpp"
#include "apps/prediction_output.hpp"
#include "apps/tables_scoring.hpp"
#include "io/sparse_examples.hpp"
#include "io/model_file.hpp"

namespace psgrad {

namespace {

// Examples in the named columns a model with tables reads, as its file declares them.
int predict_named_columns(const PredictOptions& options, const ErrorExit& error) {
  if (options.scale) return error.refused("--scale: a model with embedding tables reads no scaled features");
  auto loaded = load_tables_model(options.model_path);
  if (!loaded) return error.refused(loaded.error());
  auto examples = read_sparse_examples(options.input_path, model_layout(loaded->file, true));
  if (!examples) return error.refused(examples.error());
  const auto& names = loaded->file.tables->class_names;
  // Unlabelled: every example gets class 0 as a placeholder target, which predicting never reads.
  examples->class_names = names;
  examples->labels.assign(examples->count, 0);
  const auto out = predictions_text(options.format, ClassLabels{names, names.size()},
                                    predict_examples(*loaded, *examples), examples->count);
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
  return 0;
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
  const ErrorExit error{"psgrad predict"};
  if (model_file_has_tables(options.model_path)) return predict_named_columns(options, error);
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
  std::vector<float> probabilities;
  probabilities.reserve(inputs->count * loaded->header.num_classes);
  const auto predictions = predict(loaded->model, inputs->inputs.data(), inputs->count, batch_size);
  if (!predictions) return error.refused(fmt::format("{}: {}", options.input_path, predictions.error()));
  for (const auto& prediction : *predictions)
    probabilities.insert(probabilities.end(), prediction.probabilities.begin(), prediction.probabilities.end());
  const auto out = predictions_text(options.format, ClassLabels{{}, loaded->header.num_classes}, probabilities,
                                    inputs->count);
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
  return 0;
}

}  // namespace psgrad
