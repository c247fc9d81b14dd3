// Feeds evaluation reports to EarlyStopping, remembering the best weights and raising the stop flag.
#include "apps/best_weights.hpp"

#include <fmt/format.h>

namespace psgrad {

BestWeights::BestWeights(std::uint64_t patience, bool keep_weights) : keep_weights_(keep_weights), stopping_(patience) {}

SnapshotCallback BestWeights::callback() {
  return [self = shared_from_this()](const EvaluationReport& report, const Weights& weights) {
    self->see(report, weights);
  };
}

void BestWeights::see(const EvaluationReport& report, const Weights& weights) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++evaluations_;
  // Steps are the server's version: the same count in sync (iterations) and async (gradients).
  const bool best = report.final ? stopping_.record_final(weights.version, report.accuracy)
                                 : stopping_.record(weights.version, report.accuracy);
  // Weights handed out are immutable, so keeping the best is holding on to its buffer, not a copy.
  if (best && keep_weights_) best_ = weights;
  if (stopping_.should_stop() && !patience_ran_out_at_) {
    patience_ran_out_at_ = weights.version;
    best_when_ran_out_ = stopping_.best_step().value_or(0);
    best_accuracy_when_ran_out_ = stopping_.best_accuracy();
    stop_->store(true);
  }
}

std::optional<Weights> BestWeights::kept_weights() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!keep_weights_ || best_.values.size() == 0) return std::nullopt;
  return best_;
}

std::string BestWeights::summary_line(const TrainingSummary& summary) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::string line;
  // Async and ssp runs go on applying gradients until the stop reaches the driver, so the run may end
  // (and a later evaluation even improve) some steps after the evaluation that used up the patience: the
  // line names the evaluation that was not beaten, so that a later best does not contradict it.
  if (summary.stopped_early && patience_ran_out_at_) {
    line = fmt::format("stopped early after step {}: the {} evaluations up to step {} did not improve on step {}'s "
                       "dev accuracy, {:.3f}",
                       summary.steps, stopping_.patience(), *patience_ran_out_at_, best_when_ran_out_,
                       best_accuracy_when_ran_out_);
    if (summary.steps > *patience_ran_out_at_)
      line += fmt::format(" (steps {} to {} were applied before the stop took effect)", *patience_ran_out_at_ + 1,
                          summary.steps);
  }
  if (keep_weights_ && stopping_.best_step()) {
    line += fmt::format("{}kept the weights of step {}: the best dev accuracy, {:.3f}, of {} evaluations",
                        line.empty() ? "" : "; ", *stopping_.best_step(), stopping_.best_accuracy(), evaluations_);
  } else if (!line.empty() && stopping_.best_step() && *stopping_.best_step() != best_when_ran_out_) {
    line += fmt::format("; a later evaluation did better, {:.3f} at step {} (training.save_best keeps the best)",
                        stopping_.best_accuracy(), *stopping_.best_step());
  } else if (!line.empty()) {
    line += " (training.save_best would keep those weights)";
  }
  return line;
}

}  // namespace psgrad
