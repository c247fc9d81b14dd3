// The server end of training across processes, for every model: publish a Coordinator, train with the
// workers (and shard processes) that join, stop them all.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "caf/actor_system.hpp"
#include "actors/evaluator.hpp"
#include "actors/trace_recorder.hpp"
#include "actors/trained_run.hpp"
#include "actors/training_job.hpp"
#include "model/checkpoint.hpp"
#include "model/data_fingerprint.hpp"
#include "model/dataset.hpp"
#include "model/result.hpp"
#include "model/sparse_dataset.hpp"
#include "model/table_optimizer.hpp"

namespace psgrad {

// What a model with tables adds to a served run: its tables are held by cluster.servers table shard
// processes (`psgrad shard --tables`), and the dense part by this process alone.
struct ServedTables {
  std::shared_ptr<const SparseDataset> dev;  // named columns
  TableOptimizerChoice optimizer;
  // Read every row of every table into the result at the end (to save the model, or compare): the tables
  // then pass through this process once, which is what holding them elsewhere avoids.
  bool collect_rows = true;
  std::uint64_t resume_piece_words = std::uint64_t{1} << 22;  // the most words of rows one message carries
};

struct ServeSetup {
  TrainingJob job;
  std::string config;  // resolved TOML sent to every worker and shard process
  std::shared_ptr<const Dataset> dev;  // a model of dense arrays' dev set
  std::optional<ServedTables> tables;  // a model with tables (then `dev` is unused)
  DataFingerprint train_data;  // what a worker's training set must be to join; empty: not checked
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string token;
  bool tls = false;  // publish through CAF's OpenSSL module (the actor system must have it loaded)
  std::chrono::milliseconds join_timeout{600000};  // for every worker and shard process; 0: forever
  std::function<void(std::uint16_t port)> on_listening;
  // While waiting for joins: why those still missing will never come (the processes this server started
  // for them ended), else empty; asked every 200 ms. Empty function: processes started elsewhere.
  std::function<std::string()> joiners_gone;
  std::function<void(const std::string&)> on_event;
  ReportCallback on_report;
  // Each checkpoint the driver takes, in the order taken; with tables, once every table shard process's
  // part is in it (asked for over the network; the data's fingerprint is train_data). Empty: none.
  std::function<void(const TrainingCheckpoint&)> on_checkpoint;
  bool checkpoints_on_signal_only = false;  // see DriverHooks::checkpoints_on_signal_only
  std::shared_ptr<const std::atomic<int>> interrupt;  // see DriverHooks::interrupt
  std::shared_ptr<TraceRecorder> trace;  // see DriverHooks::trace
  std::shared_ptr<const std::atomic<bool>> stop_early;  // see DriverHooks::stop_early
  SnapshotCallback on_snapshot;                         // see spawn_evaluator
  // Continue from here, checked against the run by the caller: the dense part here (or its shards), the
  // workers' streams through their join offers, each table shard's part of the rows, re-split for
  // cluster.servers, sent to its process before it makes its shard.
  std::shared_ptr<const TrainingCheckpoint> resume;
  // A model of dense arrays with job.cluster.servers = K > 1: shards 1..K-1 run in `psgrad shard` processes
  // that join here; this process holds shard 0.
  bool remote_shards = false;
};

// Publishes, waits for job.cluster.num_workers workers (and every shard process), trains, reads every
// table's rows (when asked), stops them all; every checkpoint taken is passed on before it returns. A
// lost table shard ends the run with one line naming it.
Result<TrainedRun> serve_training(caf::actor_system& system, const ServeSetup& setup);

}  // namespace psgrad
