// Loads a model file, scores it on the dev split of a data set (a model with tables: on its named
// columns) and prints the confusion matrix.
#include "apps/eval_command.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "apps/error_exit.hpp"
#include "apps/prediction_output.hpp"
#include "apps/sparse_data.hpp"
#include "apps/tables_scoring.hpp"
#include "io/sparse_examples.hpp"
#include "io/model_file.hpp"
#include "io/data_source.hpp"
#include "io/model_scoring.hpp"
#include "io/saved_model.hpp"
#include "io/user_text.hpp"

namespace psgrad {

namespace {

// The examples a model is scored on, and how to name them.
struct EvalData {
  std::shared_ptr<const Dataset> dev;
  std::string description;
  std::string part = "dev split";  // which of its examples are scored
};

EvalData dev_split_of(const DataSplit& split) { return {split.dev, split.description}; }

// Labelled examples from a file or folder: every label must be one of the model's classes.
Result<EvalData> eval_data_from_path(const std::string& path, const Config& config, std::size_t num_classes) {
  auto examples = load_dev_examples(path, data_source(config.data));
  if (!examples) return Error{examples.error()};
  for (std::size_t i = 0; i < examples->count; ++i) {
    if (examples->labels[i] >= num_classes)
      return Error{fmt::format("{}: example {} has label {}, but the model predicts {} classes", examples->origin, i,
                               unsigned{examples->labels[i]}, num_classes)};
  }
  const auto origin = examples->origin;
  std::error_code ignored;
  // A folder's test part is its dev split; a file has none of its own: every example in it is scored.
  return EvalData{std::make_shared<const Dataset>(to_dataset(std::move(*examples), num_classes)), origin,
                  std::filesystem::is_directory(path, ignored) ? "its test part" : "every example in the file"};
}

// --data names a folder or file of examples or a named set; without it, the data set the model was trained on.
Result<EvalData> load_eval_data(const EvalOptions& options, const Config& config, std::size_t num_classes) {
  const auto data_dir = options.data_dir.empty() ? default_data_dir() : options.data_dir;
  auto from_split = [](Result<DataSplit> split) -> Result<EvalData> {
    if (!split) return Error{split.error()};
    return dev_split_of(*split);
  };
  if (options.data.empty()) return from_split(load_data_shared(data_source(config.data), data_dir));
  std::error_code ignored;
  if (std::filesystem::exists(options.data, ignored)) return eval_data_from_path(options.data, config, num_classes);
  const auto names = data_set_names();
  if (std::find(names.begin(), names.end(), options.data) != names.end())
    return from_split(load_named_data(options.data, data_dir));
  std::string known;
  for (const auto& name : names) known += (known.empty() ? "" : ", ") + name;
  return Error{fmt::format("{}: neither a data file or folder nor a named data set ({})", echoed(options.data), known)};
}

// A model with tables on --data's named columns (labelled, every label one of the model's classes), else
// on the dev split of the data it was trained on.
int eval_named_columns(const EvalOptions& options, const ErrorExit& error) {
  auto loaded = load_tables_model(options.model_path);
  if (!loaded) return error.refused(loaded.error());
  const auto& names = loaded->file.tables->class_names;
  std::shared_ptr<const SparseDataset> examples;
  std::string description;
  if (!options.data.empty()) {
    auto read = read_sparse_examples(options.data, model_layout(loaded->file, false));
    if (!read) return error.refused(read.error());
    description = fmt::format("{}, {} examples", options.data, read->count);
    examples = std::make_shared<const SparseDataset>(std::move(read).value());
  } else {
    auto split = load_sparse_split(loaded->config);
    if (!split) return error.refused(split.error());
    if (split->class_names != names)
      return error.refused(fmt::format("{}: its classes are not the {} the model {} was trained on; the file has "
                                       "changed since",
                                       loaded->config.data.path, names.size(), options.model_path));
    description = split->description + "; dev split";
    examples = split->dev;
  }
  const auto& file = loaded->file;
  fmt::print("model: {} ({}, {} tables, {} classes, weights version {})\n", options.model_path, file.header.architecture,
             file.tables->tables.size(), names.size(), file.header.weights_version);
  fmt::print("data: {}\n", description);
  print_scoring(scoring_of(evaluate_examples(*loaded, *examples), predict_examples(*loaded, *examples),
                           examples->labels, names.size()),
                ClassLabels{names, names.size()});
  std::fflush(stdout);
  return 0;
}

}  // namespace

Command add_eval_command(CLI::App& app) {
  auto options = std::make_shared<EvalOptions>();
  auto* command = app.add_subcommand("eval", "Score a saved model (--save) on a data set's dev split");
  command->add_option("--model", options->model_path, "model file written by --save")->required();
  command->add_option("--data", options->data,
                      "labelled examples: a folder of IDX or .npy files or an .npz (their test part), a CSV file, or a "
                      "named data set (default: the model's own data set)");
  command->add_option("--data-dir", options->data_dir, "folder of the named data sets (default $PSGRAD_DATA, else ./data)");
  return {command, [options] { return run_eval_command(*options); }, true};
}

int run_eval_command(const EvalOptions& options) {
  const ErrorExit error{"psgrad eval"};
  if (model_file_has_tables(options.model_path)) return eval_named_columns(options, error);
  auto loaded = load_saved_model(options.model_path);
  if (!loaded) return error.refused(loaded.error());
  auto data = load_eval_data(options, loaded->config, loaded->header.num_classes);
  if (!data) return error.refused(data.error());
  const auto& dev = *data->dev;
  const auto fits = dev.image_rows ? check_input_width(*loaded, dev.image_rows, dev.image_cols, data->description)
                                   : check_input_width(*loaded, dev.width, data->description);
  if (!fits) return error.refused(fits.error());
  if (dev.num_classes != loaded->header.num_classes)
    return error.refused(fmt::format("{}: {} classes, but the model {} predicts {}", data->description,
                                     dev.num_classes, options.model_path, loaded->header.num_classes));
  const auto& header = loaded->header;
  fmt::print("model: {} ({}, {} inputs, {} classes, weights version {})\n", options.model_path, header.architecture,
             header.input_width, header.num_classes, header.weights_version);
  fmt::print("data: {}; {}, {} examples\n", data->description, data->part, dev.count);
  // The batch size training evaluated with, so the accuracy is the very number the run printed.
  const auto batch_size = static_cast<std::size_t>(loaded->config.evaluation.batch_size);
  print_scoring(score_model(loaded->model, dev, batch_size), ClassLabels{{}, loaded->header.num_classes});
  std::fflush(stdout);
  return 0;
}

}  // namespace psgrad
