// Training across processes: the server side publishes a Coordinator and trains with the DataWorkers
// that join; the worker side connects, joins and serves until the server stops it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "caf/actor_system.hpp"
#include "caf/scoped_actor.hpp"
#include "actors/evaluator.hpp"
#include "actors/interfaces.hpp"
#include "actors/training_job.hpp"
#include "model/checkpoint.hpp"
#include "model/dataset.hpp"

namespace psgrad {

struct ServeSetup {
  TrainingJob job;
  std::string config;  // resolved TOML sent to every worker
  std::shared_ptr<const Dataset> dev;
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string token;
  bool tls = false;  // publish through CAF's OpenSSL module (the actor system must have it loaded)
  std::chrono::milliseconds join_timeout{600000};
  std::function<void(std::uint16_t port)> on_listening;
  std::function<void(const std::string&)> on_event;
  ReportCallback on_report;
  std::function<void(const TrainingCheckpoint&)> on_checkpoint;  // empty: no checkpoints
  std::optional<TrainingCheckpoint> resume;
  // With job.servers = K > 1: shards 1..K-1 run in `psgrad serve --shard i` processes that join here;
  // this process holds shard 0.
  bool remote_shards = false;
};

// Publishes, waits for job.num_workers workers, trains, stops the workers, unpublishes.
Result<TrainingSummary> serve_training(caf::actor_system& system, const ServeSetup& setup);

struct ServerConnection {
  CoordinatorActor coordinator;
  JoinOffer offer;
};

struct RetryPolicy {
  bool tls = false;  // connect through CAF's OpenSSL module
  int attempts = 8;  // about 9 s in all with the delays below
  std::chrono::milliseconds first_delay{100};
  std::chrono::milliseconds max_delay{2000};
};

// Connects (retrying with backoff) and says hello as self_name (e.g. the host name); the offer carries the run's config and our index.
// `self` must live as long as the worker serves: the server watches it to free the worker's place
// when the process goes away before joining.
Result<ServerConnection> connect_to_server(caf::scoped_actor& self, const std::string& host,
                                           std::uint16_t port, const std::string& token,
                                           const std::string& self_name, const RetryPolicy& retry,
                                           const std::function<void(const std::string&)>& on_retry);

Result<std::uint32_t> join_server(caf::scoped_actor& self, const CoordinatorActor& coordinator,
                                  const JoinRequest& request);

// A shard process's hello: the run's config (in the offer) for shard `shard`.
Result<ServerConnection> connect_as_shard(caf::scoped_actor& self, const std::string& host, std::uint16_t port,
                                          const std::string& token, std::uint32_t shard, const RetryPolicy& retry,
                                          const std::function<void(const std::string&)>& on_retry);
Status join_as_shard(caf::scoped_actor& self, const CoordinatorActor& coordinator, std::uint32_t shard,
                     const ParameterServerActor& server, std::uint64_t layout_hash);

// Blocks until `served` (our worker or shard) is stopped (success) or the server goes away (error).
Status serve_until_stopped(caf::scoped_actor& self, const CoordinatorActor& coordinator,
                           const caf::actor_addr& served);

// Blocks until the server stops our worker (success) or the server goes away (error).
Status serve_until_stopped(caf::scoped_actor& self, const CoordinatorActor& coordinator,
                           const DataWorkerActor& worker);

}  // namespace psgrad
