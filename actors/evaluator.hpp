// The Evaluator actor: scores weight snapshots on the dev set off the training loop's path, in order.
#pragma once

#include <functional>
#include <memory>

#include "caf/actor_system.hpp"
#include "actors/interfaces.hpp"
#include "actors/trace_recorder.hpp"
#include "actors/training_job.hpp"
#include "model/dataset.hpp"

namespace psgrad {

using ReportCallback = std::function<void(const EvaluationReport&)>;

// on_report runs in the evaluator's thread for every report, in the order of the requests. With a
// trace, every evaluation is a span.
Result<EvaluatorActor> spawn_evaluator(caf::actor_system& system, const TrainingJob& job,
                                       std::shared_ptr<const Dataset> dev, ReportCallback on_report,
                                       std::shared_ptr<TraceRecorder> trace = nullptr);

}  // namespace psgrad
