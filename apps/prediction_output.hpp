// How `predict` and `eval` print a saved model's predictions and scores, for every model: one line,
// CSV row or JSON object an example, and the accuracy, loss, per-class accuracy and confusion matrix.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "io/model_scoring.hpp"

namespace psgrad {

// The classes a model predicts: named (a model with tables keeps its training data's class names) or
// numbered 0..count-1, which JSON then prints as numbers.
struct ClassLabels {
  std::vector<std::string> names;  // empty: numbered
  std::size_t count = 0;

  bool named() const { return !names.empty(); }
  std::string label(std::size_t c) const { return named() ? names[c] : std::to_string(c); }
};

// Each example's row (from 0), predicted class (the first maximum, as the evaluator picks) and class
// probabilities (count x classes, row-major), as text, csv (with a header row: p0.. or p_<name>..) or json.
std::string predictions_text(const std::string& format, const ClassLabels& classes,
                             const std::vector<float>& probabilities, std::size_t count);

// The confusion counts of the probabilities' first maxima against the true labels, with `overall` (the
// evaluator's own accuracy and loss) as the headline.
Scoring scoring_of(const Evaluation& overall, const std::vector<float>& probabilities,
                   const std::vector<std::uint32_t>& truth, std::size_t classes);

// Accuracy, loss, per-class accuracy and the confusion matrix (by class number; named classes are listed
// with their numbers first).
void print_scoring(const Scoring& scoring, const ClassLabels& classes);

}  // namespace psgrad
