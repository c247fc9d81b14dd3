// Batched forward passes over a data set: headline accuracy, confusion counts and predicted labels.
#include "io/model_scoring.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "model/finite.hpp"

namespace psgrad {

std::size_t Scoring::class_total(std::size_t truth) const {
  std::size_t total = 0;
  for (std::size_t predicted = 0; predicted < num_classes; ++predicted) total += count(truth, predicted);
  return total;
}

double Scoring::class_accuracy(std::size_t truth) const {
  const auto total = class_total(truth);
  return total ? static_cast<double>(count(truth, truth)) / static_cast<double>(total) : 0.0;
}

namespace {

// Runs the model over the inputs a batch at a time and hands each row's probabilities and label (the
// first maximum on ties, as Model::evaluate picks) to `row`.
template <class Row>
void predict_in_batches(Model& model, const float* inputs, std::size_t count, std::size_t batch_size, Row&& row) {
  const auto width = static_cast<Eigen::Index>(model.input_width());
  batch_size = std::max<std::size_t>(batch_size, 1);
  for (std::size_t start = 0; start < count; start += batch_size) {
    const auto rows = static_cast<Eigen::Index>(std::min(batch_size, count - start));
    const ConstMatrixMap probs = model.predict(ConstMatrixMap(inputs + start * width, rows, width));
    for (Eigen::Index r = 0; r < rows; ++r) {
      Eigen::Index guess = 0;
      probs.row(r).maxCoeff(&guess);
      row(probs, r, static_cast<std::size_t>(guess));
    }
  }
}

}  // namespace

std::vector<std::size_t> predict_labels(Model& model, const float* inputs, std::size_t count, std::size_t batch_size) {
  std::vector<std::size_t> labels;
  labels.reserve(count);
  predict_in_batches(model, inputs, count, batch_size,
                     [&](const ConstMatrixMap&, Eigen::Index, std::size_t label) { labels.push_back(label); });
  return labels;
}

Result<std::vector<Prediction>> predict(Model& model, const float* inputs, std::size_t count, std::size_t batch_size) {
  std::vector<Prediction> predictions;
  predictions.reserve(count);
  predict_in_batches(model, inputs, count, batch_size, [&](const ConstMatrixMap& probs, Eigen::Index r, std::size_t label) {
    Prediction prediction;
    prediction.label = label;
    for (Eigen::Index c = 0; c < probs.cols(); ++c) prediction.probabilities.push_back(probs(r, c));
    predictions.push_back(std::move(prediction));
  });
  const auto width = model.input_width();
  for (std::size_t i = 0; i < predictions.size(); ++i) {
    const auto& probabilities = predictions[i].probabilities;
    if (!first_non_finite(probabilities.data(), probabilities.size())) continue;
    const float* features = inputs + i * width;
    float largest = 0.0f;
    for (std::size_t j = 0; j < width; ++j) largest = std::max(largest, std::abs(features[j]));
    return Error{fmt::format("example {}: its class probabilities are not finite numbers: features as large as "
                             "{:g} overflow the model's float arithmetic",
                             i, largest)};
  }
  return predictions;
}

Scoring score_model(Model& model, const Dataset& data, std::size_t batch_size) {
  Scoring scoring;
  const auto n = static_cast<Eigen::Index>(data.count);
  scoring.overall = model.evaluate(ConstMatrixMap(data.input_data(), n, static_cast<Eigen::Index>(data.width)),
                                   ConstMatrixMap(data.targets.data(), n, static_cast<Eigen::Index>(data.num_classes)),
                                   std::max<std::size_t>(batch_size, 1));
  scoring.num_classes = std::max(data.num_classes, model.output_width());
  scoring.confusion.assign(scoring.num_classes * scoring.num_classes, 0);
  const auto predicted = predict_labels(model, data.input_data(), data.count, batch_size);
  for (std::size_t i = 0; i < data.count; ++i)
    ++scoring.confusion[data.labels[i] * scoring.num_classes + predicted[i]];
  return scoring;
}

AlignedFloats scaled_pixels(const IdxImages& images) {
  std::array<float, 256> scaled{};
  for (std::size_t byte = 0; byte < scaled.size(); ++byte) scaled[byte] = pixel_value(static_cast<std::uint8_t>(byte));
  AlignedFloats inputs(images.pixels.size());
  std::transform(images.pixels.begin(), images.pixels.end(), inputs.begin(),
                 [&](std::uint8_t byte) { return scaled[byte]; });
  return inputs;
}

}  // namespace psgrad
