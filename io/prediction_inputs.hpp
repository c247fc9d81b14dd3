// The examples `psgrad predict` is given, in any data format, scaled as the model's training data were.
#pragma once

#include <cstddef>
#include <string>

#include "io/data_source.hpp"
#include "io/labeled_examples.hpp"
#include "model/result.hpp"

namespace psgrad {

// path: an IDX images file (raw or .gz, pixels / 255), a .npy array of examples, an .npz (its x_test, else
// its x_train), a CSV file of width feature columns, or of width + 1 with the label in
// source.label_column (the label is then ignored), or a folder of IDX or .npy files (its test part).
// NumPy and CSV features are multiplied by source.scale. Labels are kept when the input has them.
Result<LabeledExamples> read_prediction_inputs(const std::string& path, std::size_t width, const DataSource& source);

}  // namespace psgrad
