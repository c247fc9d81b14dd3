// Scores examples with a saved sparse model: rows the file holds as saved, any other as the shard that
// trained it would answer a pull, so scores equal those of the model at the end of its run.
#include "apps/tables_scoring.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model/embedding_table.hpp"
#include "model/sparse_batcher.hpp"

namespace psgrad {

namespace {

// Field f's table as training left it: the rows it made, and for every other key the row it would make.
EmbeddingTable initial_rows(const LoadedTablesModel& loaded, std::size_t f) {
  EmbeddingTableSettings settings;
  settings.width = loaded.file.tables->tables[f].rows.width;
  settings.init_seed = loaded.file.tables->tables[f].init_seed;
  settings.low = loaded.model.fields()[f].low;  // SparseLinear's rows start at zero
  settings.high = loaded.model.fields()[f].high;
  return EmbeddingTable(settings);
}

// Field f's rows of keys: the saved row of a key the file holds, else its initial row.
SparseRows rows_of(const LoadedTablesModel& loaded, std::size_t f, const std::vector<std::uint64_t>& keys) {
  const auto& saved = loaded.file.tables->tables[f];
  const auto width = saved.rows.width;
  const EmbeddingTable initial = initial_rows(loaded, f);
  SparseRows field_rows(keys, width);
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
  return field_rows;
}

// The rows of each field's pull list.
std::vector<SparseRows> rows_for(const LoadedTablesModel& loaded, const BatchLookup& lookup) {
  std::vector<SparseRows> rows;
  for (std::size_t f = 0; f < lookup.fields.size(); ++f) rows.push_back(rows_of(loaded, f, lookup.fields[f].keys));
  return rows;
}

}  // namespace

Result<std::vector<float>> whole_table(const LoadedTablesModel& loaded, std::size_t field) {
  const auto rows = loaded.model.fields().at(field).rows;
  const auto width = loaded.file.tables->tables.at(field).rows.width;
  if (rows > (std::uint64_t{1} << 28) / std::max<std::size_t>(width, 1))
    return Error{fmt::format("table {} has {} rows of {} floats: too large to write out whole", field, rows, width)};
  std::vector<std::uint64_t> keys(rows);
  for (std::uint64_t key = 0; key < rows; ++key) keys[key] = key;
  return rows_of(loaded, field, keys).values;
}

SparseLayout model_layout(const ModelFileContents& file, bool without_labels) {
  SparseLayout layout{file.tables->columns, file.tables->label, file.tables->max_tokens};
  if (without_labels) layout.without_labels = true;
  else layout.known_classes = file.tables->class_names;
  return layout;
}

std::vector<float> predict_examples(LoadedTablesModel& loaded, const SparseDataset& examples) {
  const auto classes = loaded.file.tables->class_names.size();
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

Evaluation evaluate_examples(LoadedTablesModel& loaded, const SparseDataset& examples) {
  const auto batch = gather_examples(examples, {}, 0, examples.count);
  const auto lookup = loaded.model.look_up(batch.fields, batch.numbers).value();
  const auto rows = rows_for(loaded, lookup);
  const auto& targets = batch.targets;
  return loaded.model.evaluate(loaded.model.dense().weights_data(), lookup, rows,
                               ConstMatrixMap(targets.data(), targets.rows(), targets.cols()),
                               loaded.config.evaluation.batch_size);
}

}  // namespace psgrad
