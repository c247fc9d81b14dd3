// Early stopping on dev accuracy: the best evaluation so far and how many since have not beaten it.
#pragma once

#include <cstdint>
#include <optional>

namespace psgrad {

class EarlyStopping {
 public:
  // patience: evaluations in a row without a better accuracy before training should stop; 0 never.
  explicit EarlyStopping(std::uint64_t patience) : patience_(patience) {}

  // One periodic evaluation of the weights after `step` steps; true when it is the best so far (a tie
  // keeps the earlier step: the same accuracy with fewer steps).
  bool record(std::uint64_t step, double accuracy) {
    if (!best_step_ || accuracy > best_accuracy_) {
      best_step_ = step;
      best_accuracy_ = accuracy;
      without_improvement_ = 0;
      return true;
    }
    ++without_improvement_;
    return false;
  }

  // The final evaluation may still be the best, but it does not count against the patience.
  bool record_final(std::uint64_t step, double accuracy) {
    if (best_step_ && accuracy <= best_accuracy_) return false;
    best_step_ = step;
    best_accuracy_ = accuracy;
    return true;
  }

  bool should_stop() const { return patience_ > 0 && without_improvement_ >= patience_; }
  std::optional<std::uint64_t> best_step() const { return best_step_; }
  double best_accuracy() const { return best_accuracy_; }
  std::uint64_t evaluations_without_improvement() const { return without_improvement_; }
  std::uint64_t patience() const { return patience_; }

 private:
  std::uint64_t patience_;
  std::optional<std::uint64_t> best_step_;
  double best_accuracy_ = 0.0;
  std::uint64_t without_improvement_ = 0;
};

}  // namespace psgrad
