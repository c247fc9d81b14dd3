// Where a run's examples come from: a named set, or your own IDX, NumPy or CSV files, shaped by the
// [data] keys (label column, dev split, scale).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "io/config.hpp"
#include "io/labeled_examples.hpp"
#include "io/named_datasets.hpp"
#include "model/result.hpp"

namespace psgrad {

// The [data] section says all a source is: its keys, their defaults and checks live in one place.
using DataSource = DataSection;

inline DataSource data_source(const DataSection& section) { return section; }

enum class DataFormat { idx_folder, npy_folder, npz_file, csv_file };

// Tells a path's format from what it is: a folder with x_train.npy is NumPy, any other folder IDX; a
// file is .npz by its zip signature, else CSV. A lone .npy file is refused: it holds no labels.
Result<DataFormat> data_format(const std::string& path);

// Train and dev splits: path's test part is the dev split, or dev_path's examples, or dev_fraction of
// path's. The classes are 0 to the largest label of either split. Errors are one line naming the file
// and, for CSV, the line and column, or the [data] key at fault.
Result<DataSplit> load_data_source(const DataSource& source, const std::string& data_dir);

// As load_data_source, loaded once per process and shared read-only afterwards.
Result<DataSplit> load_data_shared(const DataSource& source, const std::string& data_dir);

// The examples to score a model on when `path` is given instead of the model's own data: the test part
// of an IDX folder, .npz or .npy folder, every row of a CSV file (label_column and scale from source;
// IDX pixels are divided by 255 whatever the scale).
Result<LabeledExamples> load_dev_examples(const std::string& path, const DataSource& source);

// The shape the source declares (headers, or a CSV file's first row and line count), without loading
// the examples; classes stay at the default 10 for your own data.
Result<DataShape> peek_data_shape(const DataSource& source, const std::string& data_dir);

}  // namespace psgrad
