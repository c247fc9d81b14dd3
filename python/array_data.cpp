// Checks NumPy arrays as the .npy reader checks files, and borrows or converts their features.
#include "python/array_data.hpp"

#include "model/data_fingerprint.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "io/labeled_examples.hpp"
#include "model/finite.hpp"
#include "python/python_reference.hpp"

namespace psgrad::python {

namespace py = pybind11;

namespace {

std::string shape_text(const py::array& array) {
  std::vector<py::ssize_t> shape(array.shape(), array.shape() + array.ndim());
  return shape.size() == 1 ? fmt::format("({},)", shape[0]) : fmt::format("({})", fmt::join(shape, ", "));
}

std::string dtype_text(const py::array& array) { return py::str(array.dtype()).cast<std::string>(); }

// The shape of (n, features) or (n, rows, cols) rows, before any value is read.
Result<FeatureRows> rows_shape(const py::array& x, const std::string& name) {
  if (x.ndim() != 2 && x.ndim() != 3)
    return Error{fmt::format("{}: shape {}; expected (examples, features) or (examples, rows, cols)", name,
                             shape_text(x))};
  FeatureRows rows;
  rows.count = static_cast<std::size_t>(x.shape(0));
  rows.width = static_cast<std::size_t>(x.size() / std::max<py::ssize_t>(x.shape(0), 1));
  if (x.ndim() == 3) {
    rows.image_rows = static_cast<std::size_t>(x.shape(1));
    rows.image_cols = static_cast<std::size_t>(x.shape(2));
  }
  if (rows.count == 0) return Error{fmt::format("{}: holds no examples (shape {})", name, shape_text(x))};
  if (rows.count > kMaxExamples)
    return Error{fmt::format("{}: {} examples exceed the limit of {}", name, rows.count, kMaxExamples)};
  if (rows.width == 0 || rows.width > kMaxFeatures)
    return Error{fmt::format("{}: shape {} gives {} features per example; expected 1 to {}", name, shape_text(x),
                             rows.width, kMaxFeatures)};
  return rows;
}

Error not_finite(const std::string& name, std::size_t index, std::size_t width, double value, double scale) {
  return Error{fmt::format("{}: example {}, feature {}: {} {}", name, index / width, index % width, value,
                           std::isfinite(value) ? fmt::format("times data.scale {} is not a finite float", scale)
                                                : std::string("is not a finite number"))};
}

Result<FeatureRows> float_rows(const py::array& x, FeatureRows rows, const std::string& name, double scale,
                               RowAlignment alignment) {
  // The same array when it is already C-contiguous float32; a C-contiguous copy otherwise.
  const auto contiguous = py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(x);
  if (!contiguous) throw py::error_already_set();
  const float* values = contiguous.data();
  const std::size_t total = rows.count * rows.width;
  const bool aligned = reinterpret_cast<std::uintptr_t>(values) % AlignedAllocator<float>::alignment == 0;
  if (scale == 1.0 && (alignment == RowAlignment::any || aligned)) {
    if (const auto bad = first_non_finite(values, total)) return not_finite(name, *bad, rows.width, values[*bad], 1.0);
    rows.data = values;
    rows.owner = held_by_python(contiguous);
    return rows;
  }
  rows.copied.resize(total);
  for (std::size_t i = 0; i < total; ++i) {
    const auto scaled = static_cast<float>(static_cast<double>(values[i]) * scale);
    if (!std::isfinite(scaled)) return not_finite(name, i, rows.width, values[i], scale);
    rows.copied[i] = scaled;
  }
  rows.data = rows.copied.data();
  return rows;
}

Result<FeatureRows> pixel_rows(const py::array& x, FeatureRows rows, const std::string& name, double scale) {
  if (scale != 1.0)
    return Error{fmt::format("{}: data.scale {} applies to float32 features; uint8 pixels are always divided by 255 "
                             "(remove data.scale)",
                             name, scale)};
  const auto contiguous = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>::ensure(x);
  if (!contiguous) throw py::error_already_set();
  std::array<float, 256> scaled{};
  for (std::size_t byte = 0; byte < scaled.size(); ++byte) scaled[byte] = pixel_value(static_cast<std::uint8_t>(byte));
  const std::uint8_t* bytes = contiguous.data();
  rows.copied.resize(rows.count * rows.width);
  std::transform(bytes, bytes + rows.copied.size(), rows.copied.begin(), [&](std::uint8_t byte) { return scaled[byte]; });
  rows.data = rows.copied.data();
  return rows;
}

Result<std::vector<std::uint8_t>> labels_of(const py::array& y, const std::string& name, std::size_t count,
                                            const std::string& x_name) {
  const char kind = y.dtype().kind();
  if (kind == 'b') return Error{fmt::format("{}: holds booleans; expected whole-number class labels", name)};
  if (kind != 'i' && kind != 'u')
    return Error{fmt::format("{}: dtype {}; expected whole-number class labels (an integer array)", name,
                             dtype_text(y))};
  const bool column = y.ndim() == 2 && y.shape(1) == 1;
  if (y.ndim() != 1 && !column)
    return Error{fmt::format("{}: has shape {}; expected one label per example, (n,) or (n, 1)", name, shape_text(y))};
  if (static_cast<std::size_t>(y.shape(0)) != count)
    return Error{fmt::format("{} holds {} examples but {} holds {} labels", x_name, count, name, y.shape(0))};
  // Unsigned labels are read as unsigned: 2**64 - 1 is itself in a message, not -1.
  std::vector<std::uint8_t> labels(count);
  auto take = [&](const auto& values) -> Status {
    if (!values) throw py::error_already_set();
    for (std::size_t i = 0; i < count; ++i) {
      auto label = label_value(static_cast<double>(values.data()[i]));
      if (!label) return Error{fmt::format("{}: label {} at index {}: {}", name, values.data()[i], i, label.error())};
      labels[i] = *label;
    }
    return success();
  };
  const auto taken = kind == 'u' ? take(py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(y))
                                 : take(py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>::ensure(y));
  if (!taken) return Error{taken.error()};
  return labels;
}

std::shared_ptr<const Dataset> dataset_of(FeatureRows rows, std::vector<std::uint8_t> labels, std::size_t classes) {
  LabeledExamples examples;
  examples.count = rows.count;
  examples.width = rows.width;
  examples.image_rows = rows.image_rows;
  examples.image_cols = rows.image_cols;
  examples.inputs = std::move(rows.copied);  // empty when borrowed
  examples.labels = std::move(labels);
  auto data = to_dataset(std::move(examples), classes);
  if (rows.owner) {
    data.borrowed_inputs = rows.data;
    data.borrowed_owner = std::move(rows.owner);
  }
  return std::make_shared<const Dataset>(std::move(data));
}

}  // namespace

Result<FeatureRows> feature_rows(const py::array& x, const std::string& name, double scale, RowAlignment alignment) {
  auto rows = rows_shape(x, name);
  if (!rows) return rows;
  const char kind = x.dtype().kind();
  if (kind == 'f' && x.itemsize() == 4) return float_rows(x, std::move(rows).value(), name, scale, alignment);
  if (kind == 'u' && x.itemsize() == 1) return pixel_rows(x, std::move(rows).value(), name, scale);
  return Error{fmt::format("{}: dtype {}; expected float32 features or uint8 pixels (astype(numpy.float32) converts)",
                           name, dtype_text(x))};
}

Result<DataSplit> split_from_arrays(const py::array& x, const py::array& y, const py::array& dev_x,
                                    const py::array& dev_y, double scale) {
  auto train = feature_rows(x, "X", scale, RowAlignment::any);
  if (!train) return Error{train.error()};
  auto train_labels = labels_of(y, "y", train->count, "X");
  if (!train_labels) return Error{train_labels.error()};
  auto dev = feature_rows(dev_x, "dev X", scale, RowAlignment::aligned);
  if (!dev) return Error{dev.error()};
  auto dev_labels = labels_of(dev_y, "dev y", dev->count, "dev X");
  if (!dev_labels) return Error{dev_labels.error()};
  if (train->width != dev->width)
    return Error{fmt::format("X has {} features per example but dev X has {}", train->width, dev->width)};
  std::size_t largest = 0;
  for (const auto* labels : {&*train_labels, &*dev_labels})
    for (const auto label : *labels) largest = std::max<std::size_t>(largest, label);
  const std::size_t classes = largest + 1;
  if (classes < 2) return Error{"y: every label is 0; a classifier needs at least two classes"};
  DataSplit split;
  const auto shape = train->image_rows ? fmt::format("{}x{}", train->image_rows, train->image_cols)
                                       : fmt::format("{} features", train->width);
  split.description = fmt::format("arrays: {} train / {} dev, {}, {} classes", train->count, dev->count, shape, classes);
  split.train = dataset_of(std::move(train).value(), std::move(train_labels).value(), classes);
  split.dev = dataset_of(std::move(dev).value(), std::move(dev_labels).value(), classes);
  // Kept in the run's checkpoints and checked on resume, as for data files: a checkpoint resumed on
  // other arrays of the same shape would train on the wrong examples without a word.
  split.train_fingerprint = fingerprint_of(*split.train, "X");
  return split;
}

}  // namespace psgrad::python
