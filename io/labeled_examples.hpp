// Examples read from a CSV file or NumPy arrays: scaled features and class labels, before they become a
// Dataset, and the dev split held out of them by fraction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "io/npy_array.hpp"
#include "model/aligned_floats.hpp"
#include "model/dataset.hpp"
#include "model/result.hpp"

namespace psgrad {

// Dataset::labels holds a byte per example.
constexpr std::size_t kMaxClasses = 256;
// The IDX reader's bounds on examples and on inputs per example.
constexpr std::uint64_t kMaxExamples = std::uint64_t{1} << 28;
constexpr std::uint64_t kMaxFeatures = std::uint64_t{1} << 20;

struct LabeledExamples {
  std::size_t count = 0;
  std::size_t width = 0;       // features per example
  std::size_t image_rows = 0;  // rows x cols when the examples are images, else 0
  std::size_t image_cols = 0;
  AlignedFloats inputs;              // count x width, already multiplied by the scale
  std::vector<std::uint8_t> labels;  // count, or empty when the source has no labels
  std::string origin;                // the file(s) they came from, for messages
};

// A label value as read: a whole number from 0 to kMaxClasses - 1, or the reason it is not one.
Result<std::uint8_t> label_value(double value);

// x: (n, ...) features, y: (n,) or (n, 1) whole-number labels. Each feature is multiplied by scale in
// double precision and rounded to float once, so 1/255 gives exactly the IDX reader's byte / 255.
// An x of shape (n, rows, cols) keeps its image size.
Result<LabeledExamples> examples_from_arrays(const NpyArray& x, const std::string& x_name, const NpyArray& y,
                                             const std::string& y_name, double scale);
// Only features, for predictions: x as above.
Result<LabeledExamples> features_from_array(const NpyArray& x, const std::string& x_name, double scale);

// The examples as a Dataset with num_classes one-hot targets (every label must be below it).
Dataset to_dataset(LabeledExamples examples, std::size_t num_classes);

// Holds out the last round(fraction x n_c) examples of each class c (file order kept), so a file sorted
// by label still gives a dev set of every class. Refuses a split that leaves either side empty.
Result<std::pair<LabeledExamples, LabeledExamples>> split_by_fraction(LabeledExamples all, double fraction);

// "features in [0, 1]": the smallest and largest input, to show a scale that was forgotten.
std::string feature_range_text(const LabeledExamples& examples);

}  // namespace psgrad
