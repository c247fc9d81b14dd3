// The driver: starts the workers' push/pull loops with the servers under the mode's schedule, sends
// snapshots to the evaluator, survives lost workers, takes checkpoints, and answers "run" with a summary.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "caf/actor.hpp"
#include "caf/actor_system.hpp"
#include "actors/interfaces.hpp"
#include "actors/trace_recorder.hpp"
#include "actors/training_job.hpp"
#include "model/checkpoint.hpp"

namespace psgrad {

struct DriverHooks {
  std::vector<std::string> worker_names;              // labels in messages (e.g. hosts)
  std::function<void(const std::string&)> on_event;   // a worker lost or joined, a checkpoint taken
  // Told the index of each worker the run goes on without (lost or dropped), once.
  std::function<void(std::size_t)> on_worker_lost;
  // Receives each checkpoint (without its config text); empty: no checkpoints.
  std::function<void(const TrainingCheckpoint&)> on_checkpoint;
  // on_checkpoint keeps only the state of a run a signal stops (no training.checkpoint_path): the driver
  // then gathers checkpoints only once a signal came. Gathering a sparse run's tables at every end for
  // nothing took longer than a short run's training.
  bool checkpoints_on_signal_only = false;
  std::uint64_t start_iteration = 0;  // when resuming: loop iterations (sync) or steps (async) done
  // When resuming: the examples consumed and seconds trained before, which the progress reports
  // (metrics, TensorBoard, plots) and checkpoints carry on from; the summary counts this run's own.
  std::uint64_t start_samples = 0;
  double start_wall_seconds = 0.0;
  // Becomes a signal's number when the user asks the run to stop: the driver then stops at the next
  // step boundary (async/ssp: once the gradients in flight are applied), checkpoints and reports.
  std::shared_ptr<const std::atomic<int>> interrupt;
  // Receives the run's spans (worker exchanges, sync steps, shard applies); null: no trace.
  std::shared_ptr<TraceRecorder> trace;
  // Becomes true when the evaluations say to stop early (training.patience): the driver stops at the
  // next step boundary, as for a signal, and the summary says it stopped early.
  std::shared_ptr<const std::atomic<bool>> stop_early;
};

// The hooks' starting point for a run that continues `resume`: its iteration, samples and wall time.
inline void continue_from(DriverHooks& hooks, const TrainingCheckpoint& resume) {
  hooks.start_iteration = resume.iteration;
  hooks.start_samples = resume.samples;
  hooks.start_wall_seconds = resume.wall_seconds;
}

// The driver answers one (run_atom) request with a TrainingSummary, or an error, then quits. Workers
// that join a running job arrive as (add_worker_atom, DataWorkerActor, std::string host, uint32 index).
// It keeps membership, evaluation, checkpoints and the end of the run; the mode's RunSchedule
// (run_schedule.hpp: sync_schedule.cpp, async_schedule.cpp) decides what the workers compute.
//
// Its phases (behaviors it becomes):
//
//   idle --run--> starting --first weights--> training --(last step | interrupted)--> [draining] --> ending --> quit
//                    |                          |  ^                                      (a shard still takes
//                    |              every worker|  |a worker joins                          steps the workers fed)
//                    |                     lost v  |
//                    +-------------------> waiting_for_workers --(none within rejoin_timeout | interrupted)--> ending
//
//   any phase --failure--> ending
//
// In training every worker runs its own push/pull loop: a gradient goes worker -> servers -> worker,
// and the servers tell the driver of every gradient. Sync: the barrier sits on the servers (each push
// is answered, a response promise, once the step has every gradient it needs); the schedule names the
// members and moves the stopping point ("until") past which no worker computes, and at a stopping
// point evaluates, checkpoints or ends the run. Async/ssp: the schedule answers the servers' notes with
// credits (the run's total, the ssp bound, an interrupt: all enforced by credits). In ending, a worker
// that joins late is told to stop.
TrainingDriverActor spawn_training_driver(caf::actor_system& system, const TrainingJob& job,
                                 ParameterServerActor server, std::vector<DataWorkerActor> workers,
                                 EvaluatorActor evaluator, DriverHooks hooks = {});

// With the parameters sharded over several servers (in layout order): every step goes to all of them
// in parallel, and the driver joins their weight slices.
TrainingDriverActor spawn_training_driver(caf::actor_system& system, const TrainingJob& job,
                                 std::vector<ParameterServerActor> servers, std::vector<DataWorkerActor> workers,
                                 EvaluatorActor evaluator, DriverHooks hooks = {});

}  // namespace psgrad
