// The hooks a driver takes from a prepared run wherever it runs: event lines, checkpoints, the stop
// request, the trace and early stopping.
#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "apps/checkpointing.hpp"
#include "apps/run_setup.hpp"

namespace psgrad {

// DriverHooks for a run in this process, ServeSetup for a served run, which names them alike. Event
// lines go to stderr as "<event_prefix>: ...". `stop` becomes nonzero (a signal's number) when the run
// is to stop and save; with checkpoint_unless_configured a stopped run is saved beside its metrics file
// even where training.checkpoint_path is unset, as the command line does for a signal.
template <typename Hooks>
void attach_run_hooks(Hooks& hooks, const PreparedRun& run, std::shared_ptr<const std::atomic<int>> stop,
                      bool checkpoint_unless_configured, const std::string& event_prefix) {
  hooks.on_event = run.output->event_printer(event_prefix);
  hooks.on_checkpoint = checkpoint_writer(run, checkpoint_unless_configured ? stop : nullptr,
                                          run.tables ? run.tables->table_floats : 0);
  hooks.checkpoints_on_signal_only = checkpoints_on_signal_only(run);
  hooks.interrupt = std::move(stop);
  hooks.trace = run.trace;
  if (run.best) hooks.stop_early = run.best->stop_flag();
}

// Keeps the best evaluated weights (training.patience, training.save_best); empty when neither is set.
inline SnapshotCallback snapshot_callback(const PreparedRun& run) {
  return run.best ? run.best->callback() : SnapshotCallback{};
}

}  // namespace psgrad
