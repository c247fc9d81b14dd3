// Row-wise Adagrad: each row keeps a running sum of its squared gradients, started at
// initial_accumulator, and steps by learn_rate * g / (sqrt(sum) + eps) (Keras's Adagrad); only rows
// with a gradient are read or written.
#pragma once

#include <cstdint>
#include <vector>

#include "model/row_blocks.hpp"
#include "model/row_optimizer.hpp"

namespace psgrad {

struct AdagradSettings {
  double learn_rate = 0.01;
  double initial_accumulator = 0.1;
  double eps = 1e-7;
  double grad_clip = 0.0;  // the table's gradient norm; 0 disables
};

class SparseAdagrad final : public RowOptimizer {
 public:
  SparseAdagrad(const AdagradSettings& settings, std::size_t width);

  std::string name() const override { return "Adagrad"; }
  std::size_t width() const override { return width_; }
  double grad_clip() const override { return settings_.grad_clip; }
  void update_row(std::size_t slot, float* row, const float* gradient, float gradient_scale) override;
  // The accumulator; Adagrad keeps no step count, so the count read is 0.
  std::size_t state_width() const override { return width_; }
  std::uint64_t read_row_state(std::size_t slot, float* out) const override;
  void restore_row_state(std::size_t slot, const float* state, std::uint64_t steps) override;

  // A slot's sum of squared gradients (null for one never stepped).
  const float* accumulator(std::size_t slot) const;

 private:
  void grow(std::size_t slot);

  AdagradSettings settings_;
  std::size_t width_;
  RowBlocks accumulators_;  // a row per slot
  std::vector<bool> stepped_;
};

}  // namespace psgrad
