// Turns evaluation reports into the scalars TensorBoard plots, under tags grouped by what they measure.
#include "apps/tensorboard_output.hpp"

namespace psgrad {

std::vector<Scalar> evaluation_scalars(const EvaluationReport& report, const std::optional<TrainingProgress>& previous) {
  const auto& progress = report.progress;
  std::vector<Scalar> scalars{{"dev/accuracy", static_cast<float>(report.accuracy)},
                              {"dev/loss", static_cast<float>(report.loss)}};
  // Before the first step no batch has gone in, so there is no train loss to show.
  if (progress.samples > 0) scalars.push_back({"train/loss", static_cast<float>(progress.train_loss)});
  if (previous && progress.wall_seconds > previous->wall_seconds && progress.samples > previous->samples) {
    const double rate = static_cast<double>(progress.samples - previous->samples) /
                        (progress.wall_seconds - previous->wall_seconds);
    scalars.push_back({"train/samples_per_second", static_cast<float>(rate)});
  }
  scalars.push_back({"staleness/mean", static_cast<float>(progress.staleness_mean)});
  scalars.push_back({"staleness/max", static_cast<float>(progress.staleness_max)});
  return scalars;
}

Result<std::unique_ptr<TensorBoardOutput>> TensorBoardOutput::create_in(const std::string& folder) {
  auto file = EventFile::create_in(folder);
  if (!file) return Error{file.error()};
  return std::make_unique<TensorBoardOutput>(std::move(file).value());
}

Status TensorBoardOutput::report(const EvaluationReport& report) {
  const auto scalars = evaluation_scalars(report, previous_);
  previous_ = report.progress;
  return file_->write_scalars(static_cast<std::int64_t>(report.iteration), scalars);
}

}  // namespace psgrad
