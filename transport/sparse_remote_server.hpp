// The server end of a sparse run across processes: the dense part, the driver and the evaluator here;
// every embedding table shard in a process of its own (table shard processes 0 .. cluster.servers - 1);
// the workers in worker processes.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "caf/actor_system.hpp"
#include "actors/evaluator.hpp"
#include "actors/trained_run.hpp"
#include "actors/training_job.hpp"
#include "model/data_fingerprint.hpp"
#include "model/result.hpp"
#include "model/checkpoint_tables.hpp"
#include "model/sparse_dataset.hpp"
#include "model/table_optimizer.hpp"

namespace psgrad {

struct SparseServeSetup {
  TrainingJob job;     // model.architecture names a sparse architecture
  std::string config;  // resolved TOML sent to every worker and table shard process
  std::shared_ptr<const SparseDataset> dev;
  DataFingerprint train_data;  // what a worker's training set must be to join; empty: not checked
  TableOptimizerChoice tables;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string token;
  bool tls = false;
  std::chrono::milliseconds join_timeout{600000};  // for every worker and table shard; 0: forever
  std::function<void(std::uint16_t port)> on_listening;
  // While waiting for joins: why those still missing will never come (the processes this server started
  // for them ended), else empty; asked every 200 ms. Empty function: processes started elsewhere.
  std::function<std::string()> joiners_gone;
  std::function<void(const std::string&)> on_event;
  ReportCallback on_report;
  std::shared_ptr<const std::atomic<int>> interrupt;  // see DriverHooks::interrupt
  std::shared_ptr<const std::atomic<bool>> stop_early;  // see DriverHooks::stop_early (training.patience)
  SnapshotCallback on_snapshot;                         // each evaluated snapshot, before on_report
  std::shared_ptr<TraceRecorder> trace;                 // see DriverHooks::trace; null: none
  // Read every row of every table into the summary at the end (to save the model, or compare): the
  // tables then pass through this process once, which is what holding them elsewhere avoids.
  bool collect_tables = true;
  // Receives each checkpoint the driver takes, as train_in_process's hooks.on_checkpoint does:
  // every table shard process's part is asked for over the network (the data's fingerprint is
  // train_data); empty: no checkpoints.
  std::function<void(const TrainingCheckpoint&)> on_checkpoint;
  bool checkpoints_on_signal_only = false;  // see DriverHooks::checkpoints_on_signal_only
  // Continue from here, checked against the run by the caller (check_resume, which needs the
  // training data): the dense part here, the workers' streams through their join offers, and each table
  // shard's part of the rows, re-split for cluster.servers, sent to its process before it makes its shard.
  std::shared_ptr<const TrainingCheckpoint> resume;
  std::uint64_t resume_piece_words = std::uint64_t{1} << 22;  // the most words of rows one message carries
};

// Publishes, waits for the workers and every table shard, trains, reads every table's rows (when asked),
// stops them all; every checkpoint taken is passed on before it returns. A lost table shard ends the run
// with one line naming it.
Result<TrainedRun> serve_sparse_training(caf::actor_system& system, const SparseServeSetup& setup);

}  // namespace psgrad
