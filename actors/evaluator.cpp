#include "actors/evaluator.hpp"

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/result.hpp"
#include "caf/sec.hpp"
#include "runtime/steady_time.hpp"

namespace psgrad {

namespace {

class Evaluator : public EvaluatorActor::base {
 public:
  Evaluator(caf::actor_config& config, std::shared_ptr<Model> model, std::shared_ptr<const Dataset> dev,
            std::size_t batch_size, ReportCallback on_report, SnapshotCallback on_snapshot,
            std::shared_ptr<TraceRecorder> trace)
      : EvaluatorActor::base(config),
        model_(std::move(model)),
        dev_(std::move(dev)),
        batch_size_(batch_size),
        on_report_(std::move(on_report)),
        on_snapshot_(std::move(on_snapshot)),
        trace_(std::move(trace)) {}

  behavior_type make_behavior() override {
    return {
        [this](evaluate_atom, const Weights& weights,
               const TrainingProgress& progress) -> caf::result<EvaluationReport> {
          if (const auto differs = model_->layout().mismatch(weights.layout_hash, weights.values.size()))
            return caf::make_error(caf::sec::invalid_argument,
                                   fmt::format("evaluator: weights do not fit the model layout ({})", *differs));
          const auto started = steady_now_ns();
          const auto n = static_cast<Eigen::Index>(dev_->count);
          const auto result = model_->evaluate(
              weights.values.data(),
              ConstMatrixMap(dev_->input_data(), n, static_cast<Eigen::Index>(dev_->width)),
              ConstMatrixMap(dev_->targets.data(), n, static_cast<Eigen::Index>(dev_->num_classes)),
              batch_size_);
          if (trace_)
            trace_->add(TraceSpan{0, "server", "evaluator", "evaluate", started, steady_now_ns(), progress.iteration});
          EvaluationReport report{progress.iteration, weights.version, result.accuracy, result.loss,
                                  progress.final, progress};
          if (on_snapshot_) on_snapshot_(report, weights);
          if (on_report_) on_report_(report);
          return report;
        },
    };
  }

 private:
  std::shared_ptr<Model> model_;
  std::shared_ptr<const Dataset> dev_;
  std::size_t batch_size_;
  ReportCallback on_report_;
  SnapshotCallback on_snapshot_;
  std::shared_ptr<TraceRecorder> trace_;
};

}  // namespace

Result<EvaluatorActor> spawn_evaluator(caf::actor_system& system, const TrainingJob& job,
                                       std::shared_ptr<const Dataset> dev, ReportCallback on_report,
                                       SnapshotCallback on_snapshot, std::shared_ptr<TraceRecorder> trace) {
  if (!dev || dev->count == 0) return Error{"no dev data to evaluate on"};
  auto model = build_model(job, dev->width, dev->num_classes);
  if (!model) return Error{model.error()};
  // Detached: its own thread, so a long evaluation never queues a worker behind it.
  return system.spawn<Evaluator, caf::detached>(std::make_shared<Model>(std::move(model).value()), std::move(dev),
                                 job.evaluation.batch_size, std::move(on_report), std::move(on_snapshot), std::move(trace));
}

}  // namespace psgrad
