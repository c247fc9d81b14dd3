// Thinc's Adam.v1 and RAdam.v1: per-array gradient clipping, per-array step counters, bias correction
// folded into the learning rate, eps added to the uncorrected sqrt(v), decoupled weight decay, optional
// averages.
#pragma once

#include <cstdint>
#include <vector>

#include "model/norm_chunks.hpp"
#include "model/optimizer.hpp"
#include "model/shared_optimizer_settings.hpp"

namespace psgrad {

struct AdamSettings : SharedOptimizerSettings {
  double learn_rate = 0.001;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  bool use_averages = false;
  // RAdam (Thinc's RAdam.v1, Liu et al. 2019): the step is rectified by the variance of the adaptive
  // rate, and is plain momentum while too few steps make that variance untrustworthy.
  bool rectified = false;
};

class Adam final : public Optimizer {
 public:
  Adam(const AdamSettings& settings, const ParameterLayout& layout);

  std::string name() const override { return settings_.rectified ? "RAdam.v1" : "Adam.v1"; }
  const float* averages() const override {
    return settings_.use_averages ? averages_.data() : nullptr;
  }
  bool last_step_finite() const override { return finite_; }
  OptimizerState state() const override;
  bool set_state(const OptimizerState& state) override;
  std::optional<std::string> state_problem(const OptimizerState& state) const override;

  bool restrict_to(std::size_t begin, std::size_t end) override;
  std::vector<GradientRange> foreign_norm_ranges() const override { return foreign_ranges(chunks_); }

  std::uint64_t step_count(std::size_t array) const { return steps_[array]; }

  // A step works on chunks of at most chunk_size floats (L1-sized, never across arrays): the sum and
  // the norm of a chunk are computed while it is in cache, and an array's clip norm is the sum of its
  // chunks' sums in chunk order (the norm grid, norm_chunks.hpp). A shard owns whole chunks, so its
  // sums are the ones one server makes. The chunks are independent: with a runner (split_steps_with)
  // each pass is cut in two halves of about equal floats.
  static constexpr std::size_t chunk_size = norm_chunk_size;

  void split_steps_with(TwoPartRunner* runner) override { runner_ = runner; }

 private:
  void step(const float* source, float* target, const float* const* gradients, std::size_t count,
            const double* foreign_squares) override;

  AdamSettings settings_;
  ParameterLayout layout_;
  std::vector<float> first_moment_, second_moment_, averages_;
  std::vector<float> summed_;  // several gradients' sum, or one plus coupled L2
  std::vector<std::uint64_t> steps_;

  void make_chunks();

  std::size_t begin_ = 0, end_ = 0;  // the floats this optimizer owns (all of them unless restricted)
  std::vector<NormChunk> chunks_;
  std::vector<double> chunk_squares_;
  std::vector<float> scale_, learn_rate_;  // per array, for the step under way
  std::vector<std::uint8_t> momentum_only_;  // per array: RAdam's early steps, without the second moment
  std::vector<std::uint32_t> chunk_exponents_;  // per chunk: the new weights' largest exponent field
  bool finite_ = true;
  TwoPartRunner* runner_ = nullptr;
  std::size_t half_chunk_ = 0;  // the first chunk of a step's second half
};

}  // namespace psgrad
