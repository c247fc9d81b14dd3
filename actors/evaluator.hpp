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
// Sees each report with the weights it is about (to keep the best ones, to stop early).
using SnapshotCallback = std::function<void(const EvaluationReport&, const Weights&)>;

// on_snapshot, then on_report, run in the evaluator's thread for every report, in the order of the
// requests, before the evaluator answers. With a trace, every evaluation is a span.
Result<EvaluatorActor> spawn_evaluator(caf::actor_system& system, const TrainingJob& job,
                                       std::shared_ptr<const Dataset> dev, ReportCallback on_report,
                                       SnapshotCallback on_snapshot = {}, std::shared_ptr<TraceRecorder> trace = nullptr);

}  // namespace psgrad
