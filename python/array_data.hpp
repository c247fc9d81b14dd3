// NumPy arrays as examples: float32 rows borrowed where they lie, pixel bytes scaled as the IDX reader
// scales them, labels checked as the NumPy file reader checks them.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include <pybind11/numpy.h>

#include "io/named_datasets.hpp"
#include "model/aligned_floats.hpp"

namespace psgrad::python {

// Rows of features for training or prediction: `data` points into the caller's array (kept alive by
// `owner`) or into `copied`.
struct FeatureRows {
  const float* data = nullptr;
  std::size_t count = 0;
  std::size_t width = 0;
  std::size_t image_rows = 0;  // an (n, rows, cols) array: its image size; else 0
  std::size_t image_cols = 0;
  AlignedFloats copied;
  std::shared_ptr<const void> owner;
};

// Where reading the rows needs them on a 64-byte boundary (evaluation and prediction compute on them
// directly, and Eigen's summation order follows a buffer's alignment) or takes them anywhere (training
// copies each batch into a buffer of its own).
enum class RowAlignment { any, aligned };

// x: float32 or uint8, (n, features) or (n, rows, cols). Float32 features are multiplied by scale (in
// double, rounded once, as for .npy files) and borrowed when the scale is 1, the array C-contiguous and
// aligned as asked; uint8 are pixel bytes, divided by 255. `name` ("X") opens every error.
Result<FeatureRows> feature_rows(const pybind11::array& x, const std::string& name, double scale,
                                 RowAlignment alignment);

// Train and dev examples from (x, y) arrays; the classes are 0 to the largest label of either.
Result<DataSplit> split_from_arrays(const pybind11::array& x, const pybind11::array& y, const pybind11::array& dev_x,
                                    const pybind11::array& dev_y, double scale);

}  // namespace psgrad::python
