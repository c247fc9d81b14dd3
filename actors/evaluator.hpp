// The Evaluator actor: scores weight snapshots on the dev set off the training loop's path, in order. A
// model with embedding tables is scored with the dev set's rows pulled from the table shards at the
// snapshot's version (actors/evaluation_rows.hpp).
#pragma once

#include <functional>
#include <memory>
#include <optional>

#include "caf/actor_system.hpp"
#include "actors/evaluation_rows.hpp"
#include "actors/interfaces.hpp"
#include "actors/trace_recorder.hpp"
#include "actors/training_job.hpp"
#include "model/dataset.hpp"

namespace psgrad {

using ReportCallback = std::function<void(const EvaluationReport&)>;
// Sees each report with the weights it is about (to keep the best ones, to stop early).
using SnapshotCallback = std::function<void(const EvaluationReport&, const Weights&)>;

// Where the evaluator runs. Beside workers in one process it needs a thread of its own, so a long
// evaluation never queues a worker behind it. In a server of a model with tables whose shards are other
// processes it runs on the scheduler: there CAF's network layer may still hold a reference to it as the
// process ends (seen about once in 60 runs under load), and the actor system waits forever to free a
// detached actor, while one on the scheduler is freed or not without holding up the exit.
enum class EvaluatorThread { own, scheduler };

struct EvaluatorSetup {
  std::shared_ptr<const Dataset> dev;     // a dense model's dev set
  std::optional<EvaluatorTables> tables;  // a model with tables: its dev set and shards (then `dev` is unused)
  // on_snapshot, then on_report, run in the evaluator's thread for every report, in the order of the
  // requests, before the evaluator answers.
  ReportCallback on_report;
  SnapshotCallback on_snapshot;
  std::shared_ptr<TraceRecorder> trace;  // with a trace, every evaluation is a span
  // Told when evaluations are skipped because the evaluator fell behind (the run's event lines).
  std::function<void(const std::string&)> on_event;
  EvaluatorThread thread = EvaluatorThread::own;
};

// Evaluations wait in order. Each waiting one holds a copy of the weights, so when the evaluator falls
// behind (evaluation.frequency too low for its dev pass) the waiting periodic evaluations are bounded:
// past the bound the oldest is skipped, and on_event says so, once when it starts and with the count at
// the final evaluation. An evaluation someone awaits (the final one, a stopping point's) is never skipped,
// nor, in sync, one of a model with tables, whose shards hold the step for it.
// Fails when there is no dev data or the job's model cannot be built for it.
Result<EvaluatorActor> spawn_evaluator(caf::actor_system& system, const TrainingJob& job, EvaluatorSetup setup);

}  // namespace psgrad
