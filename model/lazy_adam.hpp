// Row-wise lazy Adam (TensorFlow's LazyAdam, PyTorch's SparseAdam) with Thinc's Adam.v1 arithmetic:
// only rows with a gradient step, each with its own moments and step count, so a row's bias
// correction follows its own updates; untouched rows neither move nor decay their moments.
#pragma once

#include <cstdint>
#include <vector>

#include "model/row_blocks.hpp"
#include "model/row_optimizer.hpp"

namespace psgrad {

struct LazyAdamSettings {
  double learn_rate = 0.001;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double grad_clip = 1.0;  // the table's gradient norm, as Thinc clips each array; 0 disables
  double L2 = 0.0;         // decoupled weight decay w -= learn_rate * L2 * w, of stepped rows only
};

class LazyAdam final : public RowOptimizer {
 public:
  LazyAdam(const LazyAdamSettings& settings, std::size_t width);

  std::string name() const override { return "LazyAdam"; }
  std::size_t width() const override { return width_; }
  double grad_clip() const override { return settings_.grad_clip; }
  void update_row(std::size_t slot, float* row, const float* gradient, float gradient_scale) override;
  void prefetch_row(std::size_t slot) const override;
  // The first moments, then the second; the count is the row's own step count, its bias correction's t.
  std::size_t state_width() const override { return 2 * width_; }
  std::uint64_t read_row_state(std::size_t slot, float* out) const override;
  void restore_row_state(std::size_t slot, const float* state, std::uint64_t steps) override;

  // A slot's steps so far (0 for one never stepped) and its moments (null for one never stepped).
  std::uint64_t row_steps(std::size_t slot) const { return slot < steps_.size() ? steps_[slot] : 0; }
  const float* first_moment(std::size_t slot) const;
  const float* second_moment(std::size_t slot) const;

 private:
  void grow(std::size_t slot);
  // The bias-corrected learning rate of a row's t-th step.
  float step_rate(std::uint64_t t);

  // Rows share step counts, so the rates of the first counts are kept rather than taken with two pow()
  // a row: the same doubles, rounded once, so a kept rate is bit for bit the one computed.
  static constexpr std::size_t kKeptRates = std::size_t{1} << 16;

  LazyAdamSettings settings_;
  std::size_t width_;
  RowBlocks first_moment_, second_moment_;  // a row per slot
  std::vector<std::uint64_t> steps_;
  std::vector<float> rates_;  // rates_[t - 1]: step_rate(t), for the counts met so far, up to kKeptRates
};

}  // namespace psgrad
