// Scoring with a saved model with embedding tables (io/saved_model.hpp): each field's rows, the saved ones
// or the initial rows a shard would answer.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/sparse_example_builder.hpp"
#include "io/model_file.hpp"
#include "io/saved_model.hpp"
#include "model/model.hpp"
#include "model/result.hpp"
#include "model/sparse_dataset.hpp"
#include "model/sparse_model.hpp"

namespace psgrad {

// Field `field`'s whole table (rows x width, row-major) as training left it: the rows the file holds,
// the initial row of every other key; for handing the model to Thinc. Refused beyond 2^28 floats.
Result<std::vector<float>> whole_table(const LoadedTablesModel& loaded, std::size_t field);

// How the model's examples are read: its columns, label and token bound; with the model's classes
// unless without_labels.
SparseLayout model_layout(const ModelFileContents& file, bool without_labels);

// Class probabilities (examples x classes, row-major) of every example, scored in batches of the
// config's evaluation.batch_size.
std::vector<float> predict_examples(LoadedTablesModel& loaded, const SparseDataset& examples);

// Accuracy and mean cross-entropy of labelled examples, scored as the run's evaluator scores its dev set.
Evaluation evaluate_examples(LoadedTablesModel& loaded, const SparseDataset& examples);

}  // namespace psgrad
