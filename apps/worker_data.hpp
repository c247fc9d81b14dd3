// A worker process's training data, read on this machine as the server's config names it: a dense model's
// examples (IDX, NumPy, CSV files, named sets) or, for a model with embedding tables, examples with id
// fields (JSON Lines, CSV).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "io/config.hpp"
#include "model/data_fingerprint.hpp"
#include "model/dataset.hpp"
#include "model/result.hpp"
#include "model/sparse_dataset.hpp"

namespace psgrad {

struct WorkerData {
  std::shared_ptr<const Dataset> dense;         // a dense model's training set
  std::shared_ptr<const SparseDataset> tables;  // a model with tables' training set
  std::uint64_t dev_count = 0;
  DataFingerprint fingerprint;  // the server's checkpoints index into its training data: a worker's must be the same
  std::string description;
};

// `data_option` is --data-dir: empty, the data where the config names it; else the file or folder on this
// machine that stands for the server's data path (or, for named sets, the folder holding them).
Result<WorkerData> load_worker_data(const Config& config, const std::string& data_option);

}  // namespace psgrad
