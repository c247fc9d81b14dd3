// Thinc's SGD.v1: plain gradient descent with per-array clipping, optional L2 / weight decay and
// optional weight averages.
#pragma once

#include <cstdint>
#include <vector>

#include "model/norm_chunks.hpp"
#include "model/optimizer.hpp"
#include "model/shared_optimizer_settings.hpp"

namespace psgrad {

struct SgdSettings : SharedOptimizerSettings {
  double learn_rate = 0.1;
  bool use_averages = false;
};

class Sgd final : public Optimizer {
 public:
  Sgd(const SgdSettings& settings, const ParameterLayout& layout);
  std::string name() const override { return "SGD.v1"; }
  const float* averages() const override { return settings_.use_averages ? averages_.data() : nullptr; }
  bool last_step_finite() const override { return finite_; }
  bool restrict_to(std::size_t begin, std::size_t end) override;
  std::vector<GradientRange> foreign_norm_ranges() const override { return foreign_ranges(chunks_); }
  OptimizerState state() const override;
  bool set_state(const OptimizerState& state) override;
  std::optional<std::string> state_problem(const OptimizerState& state) const override;

 private:
  void step(const float* source, float* target, const float* const* gradients, std::size_t count,
            const double* foreign_squares) override;

  SgdSettings settings_;
  ParameterLayout layout_;
  std::vector<std::uint64_t> steps_;
  std::vector<float> summed_;  // several gradients' sum, or one plus coupled L2 (owned floats)
  std::vector<float> averages_;  // with use_averages: Thinc's weight averages (owned floats)
  std::size_t begin_ = 0, end_ = 0;  // the floats this optimizer owns (all of them unless restricted)
  // Clip norms are summed on the norm grid, as Adam's, so an array cut between shards is clipped by
  // the norm of all of it from the sums of squares of the chunks held elsewhere.
  std::vector<NormChunk> chunks_;
  std::vector<double> chunk_squares_;
  std::vector<float> scale_;  // per array, for the step under way
  bool finite_ = true;
};

}  // namespace psgrad
