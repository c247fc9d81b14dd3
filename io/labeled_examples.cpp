// Arrays to examples, examples to a Dataset, and the per-class dev split.
#include "io/labeled_examples.hpp"

#include <algorithm>
#include <cmath>
#include <new>

#include <fmt/format.h>

#include "io/machine_memory.hpp"

namespace psgrad {
namespace {

Error fault(const std::string& where, const std::string& what) { return Error{fmt::format("{}: {}", where, what)}; }

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  return shape.empty() ? "() (a scalar)" : fmt::format("({})", fmt::join(shape, ", "));
}

Result<LabeledExamples> features_of(const NpyArray& x, const std::string& x_name, double scale) {
  if (x.shape.empty()) return fault(x_name, "is a scalar, expected an array of examples (n, features...)");
  LabeledExamples examples;
  examples.count = x.shape[0];
  std::uint64_t width = 1;
  for (std::size_t d = 1; d < x.shape.size(); ++d) width *= x.shape[d];
  if (examples.count == 0) return fault(x_name, fmt::format("holds no examples (shape {})", shape_text(x.shape)));
  if (examples.count > kMaxExamples)
    return fault(x_name, fmt::format("{} examples exceed the limit of {}", examples.count, kMaxExamples));
  if (width == 0 || width > kMaxFeatures)
    return fault(x_name, fmt::format("shape {} gives {} features per example; expected 1 to {}", shape_text(x.shape),
                                     width, kMaxFeatures));
  examples.width = width;
  if (x.shape.size() == 3) {
    examples.image_rows = x.shape[1];
    examples.image_cols = x.shape[2];
  }
  const std::size_t total = examples.count * examples.width;
  try {
    examples.inputs.resize(total);
  } catch (const std::bad_alloc&) {
    return fault(x_name, fmt::format("not enough memory for {} features ({})", total,
                                     memory_size_text(4.0 * static_cast<double>(total))));
  }
  for (std::size_t i = 0; i < total; ++i) {
    const double value = x.value(i);
    const auto scaled = static_cast<float>(value * scale);
    if (!std::isfinite(scaled)) {
      return fault(x_name, fmt::format("example {}, feature {}: {} {}", i / examples.width, i % examples.width, value,
                                       std::isfinite(value) ? fmt::format("times data.scale {} is not a finite float", scale)
                                                            : std::string("is not a finite number")));
    }
    examples.inputs[i] = scaled;
  }
  examples.origin = x_name;
  return examples;
}

}  // namespace

Result<std::uint8_t> label_value(double value) {
  if (!(value >= 0 && value < static_cast<double>(kMaxClasses)) || value != std::floor(value))
    return Error{fmt::format("expected a whole number from 0 to {} (class labels)", kMaxClasses - 1)};
  return static_cast<std::uint8_t>(value);
}

Result<LabeledExamples> features_from_array(const NpyArray& x, const std::string& x_name, double scale) {
  return features_of(x, x_name, scale);
}

Result<LabeledExamples> examples_from_arrays(const NpyArray& x, const std::string& x_name, const NpyArray& y,
                                             const std::string& y_name, double scale) {
  const bool column = y.shape.size() == 2 && y.shape[1] == 1;
  if (y.shape.size() != 1 && !column)
    return fault(y_name, fmt::format("has shape {}; expected one label per example, (n,) or (n, 1)", shape_text(y.shape)));
  if (x.shape.empty() || x.shape[0] != y.shape[0])
    return Error{fmt::format("{} holds {} examples but {} holds {} labels", x_name, x.shape.empty() ? 0 : x.shape[0],
                             y_name, y.shape[0])};
  if (y.kind == 'b') return fault(y_name, "holds booleans; expected whole-number class labels");
  auto examples = features_of(x, x_name, scale);
  if (!examples) return examples;
  examples->labels.resize(examples->count);
  for (std::size_t i = 0; i < examples->count; ++i) {
    const double value = y.value(i);
    auto label = label_value(value);
    if (!label) return fault(y_name, fmt::format("label {} at index {}: {}", value, i, label.error()));
    examples->labels[i] = *label;
  }
  examples->origin = fmt::format("{} and {}", x_name, y_name);
  return examples;
}

Dataset to_dataset(LabeledExamples examples, std::size_t num_classes) {
  Dataset data;
  data.count = examples.count;
  data.width = examples.width;
  data.num_classes = num_classes;
  data.image_rows = examples.image_rows;
  data.image_cols = examples.image_cols;
  data.inputs = std::move(examples.inputs);
  data.targets.assign(data.count * num_classes, 0.0f);
  for (std::size_t i = 0; i < data.count; ++i) data.targets[i * num_classes + examples.labels[i]] = 1.0f;
  data.labels = std::move(examples.labels);
  return data;
}

Result<std::pair<LabeledExamples, LabeledExamples>> split_by_fraction(LabeledExamples all, double fraction) {
  std::vector<std::size_t> per_class(kMaxClasses, 0);
  for (const auto label : all.labels) ++per_class[label];
  // How many of each class stay in training: the first ones in file order.
  std::vector<std::size_t> train_quota(kMaxClasses, 0);
  for (std::size_t c = 0; c < kMaxClasses; ++c)
    train_quota[c] = per_class[c] - static_cast<std::size_t>(std::llround(fraction * static_cast<double>(per_class[c])));
  std::pair<LabeledExamples, LabeledExamples> split;
  auto& [train, dev] = split;
  for (auto* part : {&train, &dev}) {
    part->width = all.width;
    part->image_rows = all.image_rows;
    part->image_cols = all.image_cols;
  }
  train.origin = fmt::format("{} (the first {:g}% of each class)", all.origin, 100.0 * (1.0 - fraction));
  dev.origin = fmt::format("{} (the last {:g}% of each class)", all.origin, 100.0 * fraction);
  std::vector<std::size_t> taken(kMaxClasses, 0);
  for (std::size_t i = 0; i < all.count; ++i) {
    const auto label = all.labels[i];
    auto& part = taken[label]++ < train_quota[label] ? train : dev;
    part.inputs.insert(part.inputs.end(), all.inputs.begin() + static_cast<std::ptrdiff_t>(i * all.width),
                       all.inputs.begin() + static_cast<std::ptrdiff_t>((i + 1) * all.width));
    part.labels.push_back(label);
  }
  train.count = train.labels.size();
  dev.count = dev.labels.size();
  if (train.count == 0 || dev.count == 0)
    return Error{fmt::format("{}: data.dev_fraction {} of {} examples leaves {} for training and {} for dev; both "
                             "need at least one",
                             all.origin, fraction, all.count, train.count, dev.count)};
  return split;
}

std::string feature_range_text(const LabeledExamples& examples) {
  if (examples.inputs.empty()) return "no features";
  const auto [low, high] = std::minmax_element(examples.inputs.begin(), examples.inputs.end());
  return fmt::format("features in [{:g}, {:g}]", *low, *high);
}

}  // namespace psgrad
