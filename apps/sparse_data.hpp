// A sparse run's data: its config's named-column files as train and dev SparseDatasets with the
// class names, and the check that the config's model and data are both sparse or both dense.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "model/result.hpp"
#include "model/sparse_dataset.hpp"

namespace psgrad {

struct SparseDataSplit {
  std::shared_ptr<const SparseDataset> train;
  std::shared_ptr<const SparseDataset> dev;
  std::vector<std::string> class_names;  // the training data's; dev's labels are numbered the same
  std::string description;               // for the run's header and metrics file
  double majority_accuracy = 0.0;        // dev accuracy of always predicting training's commonest class
};

// Whether the config's model has embedding tables (model/registry.hpp).
bool is_sparse_model(const Config& config);

// Refuses, in one line naming the config and key, named columns ([data.columns]) with a dense model and
// a model with embedding tables without named columns.
Status check_model_fits_data(const Config& config);

// data.path's examples, with data.dev_path's as the dev set (its labels must be among the training
// data's classes) or the last data.dev_fraction of each class, in file order, as dense data is split.
Result<SparseDataSplit> load_sparse_split(const Config& config);

// The commonest class of `labels` (the lowest on a tie).
std::uint32_t majority_class(const std::vector<std::uint32_t>& labels, std::size_t classes);

}  // namespace psgrad
