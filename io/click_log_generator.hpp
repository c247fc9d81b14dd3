// Criteo-like click logs made up from a hidden logistic model: 13 count fields, 26 categorical fields
// of Zipf-distributed ids, and a click label drawn from the model, so a learner can beat the majority
// class. Deterministic: the same seeds give the same rows on any machine.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

#include "model/random.hpp"

namespace psgrad {

constexpr std::size_t kClickCountFields = 13;        // I1 ... I13
constexpr std::size_t kClickCategoricalFields = 26;  // C1 ... C26

struct ClickRow {
  std::array<std::uint64_t, kClickCountFields> counts{};
  std::array<std::uint32_t, kClickCategoricalFields> ids{};  // anywhere in the 2^32 key space
  double logit = 0;  // the hidden model's log-odds of a click, for checking a learner against
  bool clicked = false;
};

class ClickLogGenerator {
 public:
  // truth_seed fixes the hidden model (each field's id distribution and weights); row_seed the rows
  // drawn from it. Files of one truth seed and different row seeds are train and dev sets of one task.
  ClickLogGenerator(std::uint64_t truth_seed, std::uint64_t row_seed);

  void next(ClickRow& row);

  // The hidden model's weight of an id of a categorical field (shared by every id of its bucket).
  double id_weight(std::size_t field, std::uint32_t id) const;

 private:
  struct CountField {
    double log_mean, log_spread, weight;
  };
  struct CategoricalField {
    double cardinality;  // ranks 1 ... cardinality
    // Zipf's exponent s as the inverse CDF uses it: (n + 1)^(1 - s) - 1 and 1 / (1 - s).
    double top_less_one, inverse_power;
    std::uint32_t salt;  // which scramble of ranks to ids
    double weight_scale;
  };
  std::uint64_t truth_seed_;
  Random random_;
  std::array<CountField, kClickCountFields> count_fields_{};
  std::array<CategoricalField, kClickCategoricalFields> categorical_fields_{};
  double bias_ = 0;
};

}  // namespace psgrad
