// What identifies a sparse training set (model/sparse_dataset.hpp) in a checkpoint: its counts and a
// hash of its fields' ids, numbers and labels, in the record dense data sets use (model/data_fingerprint.hpp).
#pragma once

#include <string>

#include "model/data_fingerprint.hpp"
#include "model/sparse_dataset.hpp"

namespace psgrad {

// width: the id fields and numeric columns; images_hash: every field's bags (names, offsets, ids) and the
// numbers, bit for bit; labels_hash: the labels and class names.
DataFingerprint fingerprint_of(const SparseDataset& data, std::string name);

}  // namespace psgrad
