// training.patience and training.save_best: watches the evaluations, says when to stop, keeps the best weights.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "actors/evaluator.hpp"
#include "payloads/messages.hpp"
#include "model/early_stopping.hpp"

namespace psgrad {

class BestWeights : public std::enable_shared_from_this<BestWeights> {
 public:
  BestWeights(std::uint64_t patience, bool keep_weights);

  // For the evaluator; runs in its thread and raises the stop flag before the evaluator answers.
  SnapshotCallback callback();
  std::shared_ptr<const std::atomic<bool>> stop_flag() const { return stop_; }

  // After the run: the weights to save (the best evaluated ones with save_best, else none: the last).
  std::optional<Weights> kept_weights() const;
  // The summary's line about early stopping and the kept step; empty when neither is configured.
  std::string summary_line(const TrainingSummary& summary) const;

 private:
  void see(const EvaluationReport& report, const Weights& weights);

  bool keep_weights_;
  std::shared_ptr<std::atomic<bool>> stop_ = std::make_shared<std::atomic<bool>>(false);
  mutable std::mutex mutex_;
  EarlyStopping stopping_;
  std::uint64_t evaluations_ = 0;
  std::optional<std::uint64_t> patience_ran_out_at_;  // the step of the evaluation that used it up
  // The best evaluation when the patience ran out: the one the last `patience` evaluations did not beat.
  std::uint64_t best_when_ran_out_ = 0;
  double best_accuracy_when_ran_out_ = 0.0;
  Weights best_;
};

}  // namespace psgrad
