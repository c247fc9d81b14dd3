// Scores examples with a saved sparse model: rows the file holds as saved, any other as the shard that
// trained it would answer a pull, so scores equal those of the model at the end of its run.
#include "apps/sparse_model_use.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model/embedding_table.hpp"
#include "model/sparse_batcher.hpp"

namespace psgrad {

namespace {

// The rows of each field's pull list: the saved row of a key the file holds, else its initial row.
std::vector<SparseRows> rows_for(const LoadedSparseModel& loaded, const BatchLookup& lookup) {
  std::vector<SparseRows> rows;
  for (std::size_t f = 0; f < lookup.fields.size(); ++f) {
    const auto& saved = loaded.file.tables[f];
    const auto width = saved.rows.width;
    EmbeddingTableSettings settings;
    settings.width = width;
    settings.init_seed = saved.init_seed;
    settings.low = loaded.model.fields()[f].low;  // SparseLinear's rows start at zero
    settings.high = loaded.model.fields()[f].high;
    const EmbeddingTable initial(settings);
    SparseRows field_rows(lookup.fields[f].keys, width);
    for (std::size_t i = 0; i < field_rows.size(); ++i) {
      const auto key = field_rows.keys[i];
      const auto found = std::lower_bound(saved.rows.keys.begin(), saved.rows.keys.end(), key);
      if (found != saved.rows.keys.end() && *found == key) {
        const auto* row = saved.rows.row(static_cast<std::size_t>(found - saved.rows.keys.begin()));
        std::copy(row, row + width, field_rows.row(i));
      } else {
        initial.initial_row(key, field_rows.row(i));
      }
    }
    rows.push_back(std::move(field_rows));
  }
  return rows;
}

}  // namespace

Result<LoadedSparseModel> load_sparse_model(const std::string& path) {
  auto file = read_sparse_model_file(path);
  if (!file) return Error{file.error()};
  auto config = parse_config(file->config_text, path + " (its stored config)");
  if (!config) return Error{config.error()};
  // The number columns it was trained on, in the order the reader gives them.
  ModelSection stored = config->model;
  stored.architecture = file->architecture;
  auto model = SparseModel::build(stored, file->class_names.size(), number_column_names(file->columns));
  if (!model) return Error{fmt::format("{}: {}", path, model.error())};
  if (model->dense().parameter_count() != file->dense_weights.size())
    return Error{fmt::format("{}: holds {} dense weights, but its model {} has {}", path, file->dense_weights.size(),
                             file->architecture, model->dense().parameter_count())};
  if (model->fields().size() != file->tables.size())
    return Error{fmt::format("{}: holds {} tables, but its model has {} fields", path, file->tables.size(),
                             model->fields().size())};
  for (std::size_t f = 0; f < file->tables.size(); ++f)
    if (file->tables[f].rows.width != model->fields()[f].width)
      return Error{fmt::format("{}: table {} has rows of width {}, but its field's width is {}", path, f,
                               file->tables[f].rows.width, model->fields()[f].width)};
  model->dense().set_weights(file->dense_weights.data(), file->dense_weights.size());
  return LoadedSparseModel{std::move(file).value(), std::move(config).value(), std::move(model).value()};
}

SparseLayout model_layout(const SparseModelFile& file, bool without_labels) {
  SparseLayout layout{file.columns, file.label, file.max_tokens};
  if (without_labels) layout.without_labels = true;
  else layout.known_classes = file.class_names;
  return layout;
}

std::vector<float> predict_examples(LoadedSparseModel& loaded, const SparseDataset& examples) {
  const auto classes = loaded.file.class_names.size();
  const auto batch_size = std::max<std::size_t>(1, loaded.config.evaluation.batch_size);
  std::vector<float> probabilities;
  probabilities.reserve(examples.count * classes);
  for (std::size_t begin = 0; begin < examples.count; begin += batch_size) {
    const auto count = std::min(batch_size, examples.count - begin);
    const auto batch = gather_examples(examples, {}, begin, count);
    // The model's own fields and number columns: a mistake otherwise.
    const auto lookup = loaded.model.look_up(batch.fields, batch.numbers).value();
    const auto scores = loaded.model.predict(lookup, rows_for(loaded, lookup));
    for (Eigen::Index row = 0; row < scores.rows(); ++row)
      for (Eigen::Index c = 0; c < scores.cols(); ++c) probabilities.push_back(scores(row, c));
  }
  return probabilities;
}

Evaluation evaluate_examples(LoadedSparseModel& loaded, const SparseDataset& examples) {
  const auto batch = gather_examples(examples, {}, 0, examples.count);
  const auto lookup = loaded.model.look_up(batch.fields, batch.numbers).value();
  const auto rows = rows_for(loaded, lookup);
  const auto& targets = batch.targets;
  return loaded.model.evaluate(loaded.model.dense().weights_data(), lookup, rows,
                               ConstMatrixMap(targets.data(), targets.rows(), targets.cols()),
                               loaded.config.evaluation.batch_size);
}

}  // namespace psgrad
