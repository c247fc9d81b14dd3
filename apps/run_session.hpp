// What `train` and `serve` share around a run: signals watched from the start, the prepared run, the
// checkpoint it resumes from, the driver's hooks, and the exit code at the end.
#pragma once

#include <optional>
#include <string>

#include "actors/actor_config.hpp"
#include "apps/checkpointing.hpp"
#include "apps/run_hooks.hpp"
#include "apps/run_setup.hpp"
#include "apps/signal_watch.hpp"
#include "model/checkpoint.hpp"

namespace psgrad {

class RunSession {
 public:
  // Watches SIGINT and SIGTERM from here on; threads started later never take them, so create the
  // session before the actor system. Until training starts, a signal ends the process at once.
  RunSession() = default;
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  // Config, data, job and output (run_setup.hpp), the run's header line, then the checkpoint at
  // `resume_path` (none when empty) checked against the model, tables or none. An error is one line for "psgrad: ".
  Status open(const RunOptions& options, const std::string& resume_path);

  // Only after open() succeeded.
  PreparedRun& run() { return *run_; }
  const std::optional<TrainingCheckpoint>& resume() const { return resume_; }

  // The actor system's threads and network settings, from the run's config.
  ActorConfig actor_config() const;

  // The hooks the driver takes wherever it runs (apps/run_hooks.hpp), stopped by this session's signals.
  template <typename Hooks>
  void attach(Hooks& hooks, const std::string& event_prefix) const {
    attach_run_hooks(hooks, *run_, signals_.flag(), true, event_prefix);
  }
  SnapshotCallback snapshot_callback() const { return psgrad::snapshot_callback(*run_); }

  // From here a signal asks the run to stop and save, rather than ending the process.
  void training_started() { signals_.training_started(); }
  // The first signal's number once one came, else 0.
  int signal_received() const { return signals_.flag()->load(); }

  // The summary line, the files asked for, and the process exit code (finish_run in run_setup.hpp).
  int finish(const Result<TrainingSummary>& summary, const ModelSaver& save = {}) const;

 private:
  SignalWatch signals_;
  RunOptions options_;
  std::optional<PreparedRun> run_;
  std::optional<TrainingCheckpoint> resume_;
};

}  // namespace psgrad
