// The server end of training across processes: publish a Coordinator, train with the workers (and
// shard processes) that join, stop them all.
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
#include "payloads/messages.hpp"
#include "actors/trace_recorder.hpp"
#include "actors/training_job.hpp"
#include "model/checkpoint.hpp"
#include "model/data_fingerprint.hpp"
#include "model/dataset.hpp"
#include "model/result.hpp"

namespace psgrad {

struct ServeSetup {
  TrainingJob job;
  std::string config;  // resolved TOML sent to every worker
  std::shared_ptr<const Dataset> dev;
  DataFingerprint train_data;  // what a worker's training set must be to join
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
  std::function<void(const TrainingCheckpoint&)> on_checkpoint;  // empty: no checkpoints
  bool checkpoints_on_signal_only = false;  // see DriverHooks::checkpoints_on_signal_only
  std::shared_ptr<const std::atomic<int>> interrupt;  // see DriverHooks::interrupt
  std::shared_ptr<TraceRecorder> trace;  // see DriverHooks::trace
  std::shared_ptr<const std::atomic<bool>> stop_early;  // see DriverHooks::stop_early
  SnapshotCallback on_snapshot;                         // see spawn_evaluator
  std::optional<TrainingCheckpoint> resume;
  // With job.cluster.servers = K > 1: shards 1..K-1 run in `psgrad shard` processes that join here; this
  // process holds shard 0.
  bool remote_shards = false;
};

// Publishes, waits for job.cluster.num_workers workers, trains, stops the workers, unpublishes.
Result<TrainingSummary> serve_training(caf::actor_system& system, const ServeSetup& setup);

}  // namespace psgrad
