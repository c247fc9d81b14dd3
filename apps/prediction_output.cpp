#include "apps/prediction_output.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace psgrad {

namespace {

std::size_t first_maximum(const float* p, std::size_t classes) {
  return static_cast<std::size_t>(std::max_element(p, p + classes) - p);
}

}  // namespace

std::string predictions_text(const std::string& format, const ClassLabels& classes,
                             const std::vector<float>& probabilities, std::size_t count) {
  const auto width = classes.count;
  if (format == "json") {
    // JSON's keys are "row" and "predicted" so that jq's shorthand {row,predicted} works: jq 1.6 parses
    // {label} as its label keyword, and index is one of its builtins.
    nlohmann::json all = nlohmann::json::array();
    for (std::size_t row = 0; row < count; ++row) {
      const float* p = probabilities.data() + row * width;
      const auto predicted = first_maximum(p, width);
      nlohmann::json values = nlohmann::json::array();
      // Through the float's shortest digits, so JSON shows 0.31433332 rather than the double 0.31433331966400146.
      for (std::size_t c = 0; c < width; ++c) values.push_back(std::stod(fmt::format("{}", p[c])));
      nlohmann::json label = classes.named() ? nlohmann::json(classes.names[predicted]) : nlohmann::json(predicted);
      all.push_back({{"row", row}, {"predicted", std::move(label)}, {"probabilities", std::move(values)}});
    }
    return all.dump() + "\n";
  }
  const bool csv = format == "csv";
  std::string out;
  if (csv) {
    out = "row,predicted";
    for (std::size_t c = 0; c < width; ++c)
      out += classes.named() ? ",p_" + classes.names[c] : fmt::format(",p{}", c);
    out += "\n";
  }
  for (std::size_t row = 0; row < count; ++row) {
    const float* p = probabilities.data() + row * width;
    out += fmt::format("{}{}{}", row, csv ? "," : "\t", classes.label(first_maximum(p, width)));
    // CSV: the shortest digits that read back as the same float.
    for (std::size_t c = 0; c < width; ++c) out += csv ? fmt::format(",{}", p[c]) : fmt::format("\t{:.4f}", p[c]);
    out += "\n";
  }
  return out;
}

Scoring scoring_of(const Evaluation& overall, const std::vector<float>& probabilities,
                   const std::vector<std::uint32_t>& truth, std::size_t classes) {
  Scoring scoring;
  scoring.overall = overall;
  scoring.num_classes = classes;
  scoring.confusion.assign(classes * classes, 0);
  for (std::size_t i = 0; i < truth.size(); ++i)
    ++scoring.confusion[truth[i] * classes + first_maximum(probabilities.data() + i * classes, classes)];
  return scoring;
}

void print_scoring(const Scoring& scoring, const ClassLabels& classes) {
  std::size_t correct = 0;
  for (std::size_t c = 0; c < scoring.num_classes; ++c) correct += scoring.count(c, c);
  fmt::print("accuracy: {:.3f} ({}/{})\n", scoring.overall.accuracy, correct, scoring.overall.count);
  fmt::print("dev loss: {:.4f}\n", scoring.overall.loss);
  fmt::print("per-class accuracy:\n");
  for (std::size_t c = 0; c < scoring.num_classes; ++c)
    fmt::print("  {}: {:.3f} ({}/{})\n", c < classes.count ? classes.label(c) : std::to_string(c),
               scoring.class_accuracy(c), scoring.count(c, c), scoring.class_total(c));
  if (classes.named()) {
    std::string numbers;
    for (std::size_t c = 0; c < classes.count; ++c) numbers += fmt::format("{}{} {}", c ? ", " : "", c, classes.names[c]);
    fmt::print("classes by number: {}\n", numbers);
  }
  fmt::print("confusion matrix (rows: true label, columns: predicted label):\n      ");
  for (std::size_t c = 0; c < scoring.num_classes; ++c) fmt::print("{:>6}", c);
  fmt::print("\n");
  for (std::size_t truth = 0; truth < scoring.num_classes; ++truth) {
    fmt::print("{:>6}", truth);
    for (std::size_t predicted = 0; predicted < scoring.num_classes; ++predicted)
      fmt::print("{:>6}", scoring.count(truth, predicted));
    fmt::print("\n");
  }
}

}  // namespace psgrad
