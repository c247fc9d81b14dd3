// --tensorboard DIR: a run's evaluations as TensorBoard scalars (dev accuracy and loss, train loss,
// samples/s, staleness), one event file per run.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/tensorboard_events.hpp"
#include "payloads/messages.hpp"

namespace psgrad {

// The scalars of one evaluation. samples/s is over the stretch since the previous evaluation, so it
// needs that one's samples and wall time; the first evaluation has none.
std::vector<Scalar> evaluation_scalars(const EvaluationReport& report, const std::optional<TrainingProgress>& previous);

class TensorBoardOutput {
 public:
  static Result<std::unique_ptr<TensorBoardOutput>> create_in(const std::string& folder);
  explicit TensorBoardOutput(std::unique_ptr<EventFile> file) : file_(std::move(file)) {}

  const std::string& path() const { return file_->path(); }
  // Steps are the index the run prints (iterations in sync, gradients in async and ssp).
  Status report(const EvaluationReport& report);

 private:
  std::unique_ptr<EventFile> file_;
  std::optional<TrainingProgress> previous_;
};

}  // namespace psgrad
