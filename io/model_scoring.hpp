// Scores a model on labelled data (accuracy as training reports it, per class, confusion) and predicts labels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "io/idx.hpp"
#include "model/aligned_floats.hpp"
#include "model/dataset.hpp"
#include "model/model.hpp"

namespace psgrad {

struct Scoring {
  Evaluation overall;  // Model::evaluate, exactly what the training run's evaluator computes
  std::size_t num_classes = 0;
  std::vector<std::size_t> confusion;  // num_classes x num_classes, row: true label, column: predicted

  std::size_t count(std::size_t truth, std::size_t predicted) const { return confusion[truth * num_classes + predicted]; }
  std::size_t class_total(std::size_t truth) const;
  // Of the examples labelled truth, the share predicted right; 0 when there are none.
  double class_accuracy(std::size_t truth) const;
};

Scoring score_model(Model& model, const Dataset& data, std::size_t batch_size);

// The argmax class of each of count rows of inputs (count x model.input_width()).
std::vector<std::size_t> predict_labels(Model& model, const float* inputs, std::size_t count, std::size_t batch_size);

// One example's predicted label (the first maximum, as Model::evaluate picks) and class probabilities.
struct Prediction {
  std::size_t label = 0;
  std::vector<float> probabilities;
};
// Refuses, in one line, inputs whose probabilities come out NaN or infinite: finite features so large
// (3e38, say) that the model's float arithmetic overflows would otherwise be returned as NaN silently.
Result<std::vector<Prediction>> predict(Model& model, const float* inputs, std::size_t count, std::size_t batch_size);

// Pixel bytes scaled to [0, 1] the way data sets are loaded for training.
AlignedFloats scaled_pixels(const IdxImages& images);

}  // namespace psgrad
