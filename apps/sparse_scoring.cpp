// Reads named-column examples as a saved sparse model's columns say, and prints its predictions or scores.
#include "apps/sparse_scoring.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "apps/error_exit.hpp"
#include "apps/sparse_data.hpp"
#include "apps/sparse_model_use.hpp"
#include "io/sparse_examples.hpp"

namespace psgrad {

namespace {

std::string predictions_text(const std::string& format, const std::vector<std::string>& names,
                             const std::vector<float>& probabilities, std::size_t count) {
  const auto classes = names.size();
  std::string out;
  nlohmann::json all = nlohmann::json::array();
  if (format == "csv") {
    out = "row,predicted";
    for (const auto& name : names) out += ",p_" + name;
    out += "\n";
  }
  for (std::size_t row = 0; row < count; ++row) {
    const float* p = probabilities.data() + row * classes;
    const auto predicted = static_cast<std::size_t>(std::max_element(p, p + classes) - p);
    if (format == "json") {
      nlohmann::json values = nlohmann::json::array();
      for (std::size_t c = 0; c < classes; ++c) values.push_back(std::stod(fmt::format("{}", p[c])));
      all.push_back({{"row", row}, {"predicted", names[predicted]}, {"probabilities", std::move(values)}});
      continue;
    }
    const char* separator = format == "csv" ? "," : "\t";
    out += fmt::format("{}{}{}", row, separator, names[predicted]);
    for (std::size_t c = 0; c < classes; ++c)
      out += format == "csv" ? fmt::format(",{}", p[c]) : fmt::format("\t{:.4f}", p[c]);
    out += "\n";
  }
  return format == "json" ? all.dump() + "\n" : out;
}

}  // namespace

int run_sparse_predict(const PredictOptions& options) {
  const ErrorExit error{"psgrad predict"};
  if (options.scale) return error.refused("--scale: a model with embedding tables reads no scaled features");
  auto loaded = load_sparse_model(options.model_path);
  if (!loaded) return error.refused(loaded.error());
  auto examples = read_sparse_examples(options.input_path, model_layout(loaded->file, true));
  if (!examples) return error.refused(examples.error());
  // Unlabelled: every example gets class 0 as a placeholder target, which predicting never reads.
  examples->class_names = loaded->file.tables->class_names;
  examples->labels.assign(examples->count, 0);
  const auto probabilities = predict_examples(*loaded, *examples);
  const auto out = predictions_text(options.format, loaded->file.tables->class_names, probabilities, examples->count);
  std::fputs(out.c_str(), stdout);
  std::fflush(stdout);
  return 0;
}

int run_sparse_eval(const EvalOptions& options) {
  const ErrorExit error{"psgrad eval"};
  auto loaded = load_sparse_model(options.model_path);
  if (!loaded) return error.refused(loaded.error());
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
    if (split->class_names != loaded->file.tables->class_names)
      return error.refused(fmt::format("{}: its classes are not the {} the model {} was trained on; the file has "
                                       "changed since",
                                       loaded->config.data.path, loaded->file.tables->class_names.size(), options.model_path));
    description = split->description + "; dev split";
    examples = split->dev;
  }
  const auto& file = loaded->file;
  fmt::print("model: {} ({}, {} tables, {} classes, weights version {})\n", options.model_path, file.header.architecture,
             file.tables->tables.size(), file.tables->class_names.size(), file.header.weights_version);
  fmt::print("data: {}\n", description);
  const auto scored = evaluate_examples(*loaded, *examples);
  const auto correct = static_cast<std::size_t>(std::llround(scored.accuracy * static_cast<double>(examples->count)));
  fmt::print("accuracy: {:.3f} ({}/{})\n", scored.accuracy, correct, examples->count);
  fmt::print("dev loss: {:.4f}\n", scored.loss);
  std::fflush(stdout);
  return 0;
}

}  // namespace psgrad
