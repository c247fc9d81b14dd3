// A sparse run across "processes" in one test: a server, each table shard and each worker in an actor
// system of its own, connected over loopback through the run's gate, each role on its own thread.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "model/sparse_data_fingerprint.hpp"
#include "transport/remote_client.hpp"
#include "transport/remote_server.hpp"
#include "transport/worker_process.hpp"
#include "transport/table_shard_process.hpp"

namespace psgrad::testing {

// What each role ended with: the server's summary, and each shard's and worker's ending or error.
struct SparseProcessesRun {
  Result<TrainedRun> server = Error{"not run"};
  std::vector<Result<RunEnding>> shards;
  std::vector<Result<RunEnding>> workers;
  std::string events;  // the server's lines
};

struct SparseProcessesOptions {
  std::size_t shards = 1;  // table shard processes (job.cluster.servers)
  // Per role, the job it builds from (the server's config otherwise): a different layout is refused.
  std::function<TrainingJob(const TrainingJob&, std::size_t)> shard_job;
  std::function<TrainingJob(const TrainingJob&, std::size_t)> worker_job;
  std::optional<std::uint64_t> shard_machine_bytes;  // as a shard process sees its machine
  std::chrono::milliseconds join_timeout{60000};
  std::optional<std::size_t> lost_shard;  // this shard's actor is killed 0.5 s after it joined
  std::function<void(const TrainingCheckpoint&)> on_checkpoint;  // the server's checkpoints; empty: none
  std::string config;                                          // the run's config text, in its checkpoints
  std::shared_ptr<const TrainingCheckpoint> resume;              // the checkpoint the run continues from
  std::uint64_t resume_piece_words = std::uint64_t{1} << 22;   // the most words of rows one message carries
};

inline SparseProcessesRun run_sparse_processes(const TrainingJob& job, std::shared_ptr<const SparseDataset> train,
                                               std::shared_ptr<const SparseDataset> dev,
                                               const SparseProcessesOptions& options = {}) {
  SparseProcessesRun run;
  const std::string token = "sparse-processes-test";
  std::vector<std::unique_ptr<ActorConfig>> configs;
  std::vector<std::unique_ptr<caf::actor_system>> systems;
  auto system_of = [&](std::size_t threads) -> caf::actor_system& {
    configs.push_back(std::make_unique<ActorConfig>(threads));
    systems.push_back(std::make_unique<caf::actor_system>(*configs.back()));
    return *systems.back();
  };
  auto& server_system = system_of(2);
  std::promise<std::uint16_t> listening;
  auto port_known = listening.get_future();
  auto events = std::make_shared<std::mutex>();
  ServeSetup setup;
  setup.job = job;
  setup.tables = ServedTables{dev, {}, true, options.resume_piece_words};
  setup.token = token;
  setup.join_timeout = options.join_timeout;
  setup.config = options.config;
  setup.train_data = fingerprint_of(*train, train->origin);
  setup.on_checkpoint = options.on_checkpoint;
  setup.resume = options.resume;
  setup.on_listening = [&](std::uint16_t port) { listening.set_value(port); };
  setup.on_event = [&, events](const std::string& line) {
    std::lock_guard<std::mutex> lock(*events);
    run.events += line + "\n";
    if (std::getenv("PSGRAD_TEST_VERBOSE")) std::fprintf(stderr, "server: %s\n", line.c_str());
  };
  const auto say = [](const std::string& who) {
    return [who](const std::string& line) {
      if (std::getenv("PSGRAD_TEST_VERBOSE")) std::fprintf(stderr, "%s: %s\n", who.c_str(), line.c_str());
    };
  };
  std::thread server([&] { run.server = serve_training(server_system, setup); });
  const auto port = port_known.get();
  RetryPolicy retry;
  std::vector<std::thread> roles;
  std::thread lost;
  run.shards.assign(options.shards, Error{"not run"});
  run.workers.assign(job.cluster.num_workers, Error{"not run"});
  for (std::size_t i = 0; i < options.shards; ++i) {
    auto& system = system_of(1);
    roles.emplace_back([&, i, &system = system] {
      caf::scoped_actor self{system};
      auto connection = connect_as_table_shard(self, "127.0.0.1", port, token, static_cast<std::uint32_t>(i), retry, {});
      if (!connection) {
        run.shards[i] = Error{connection.error()};
        return;
      }
      TableShardProcessSetup shard;
      shard.index = static_cast<std::uint32_t>(i);
      shard.job = options.shard_job ? options.shard_job(job, i) : job;
      shard.listen = ShardListenSetup{"127.0.0.1", "", 0, token, false, {}};
      shard.name = "shard-thread-" + std::to_string(i);
      shard.machine_bytes = options.shard_machine_bytes;
      shard.say = say(shard.name);
      if (options.lost_shard == i)
        shard.on_joined = [&lost](const EmbeddingShardActor& actor) {
          lost = std::thread([actor] {
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
            caf::anon_send_exit(actor, caf::exit_reason::kill);
          });
        };
      run.shards[i] = serve_table_shard(self, *connection, shard);
      say(shard.name)("ended: " + (run.shards[i] ? std::string("ok") : run.shards[i].error()));
    });
  }
  for (std::size_t k = 0; k < job.cluster.num_workers; ++k) {
    auto& system = system_of(1);
    roles.emplace_back([&, k, &system = system] {
      caf::scoped_actor self{system};
      const auto name = "worker-thread-" + std::to_string(k);
      auto connection = connect_to_server(self, "127.0.0.1", port, token, name, retry, {});
      if (!connection) {
        run.workers[k] = Error{connection.error()};
        return;
      }
      WorkerProcessSetup worker;
      worker.job = options.worker_job ? options.worker_job(job, k) : job;
      worker.tables = train;
      worker.fingerprint = fingerprint_of(*train, train->origin);
      worker.description = "the test's";
      worker.token = token;
      worker.name = name;
      worker.server = "the test's server";
      worker.say = say(name);
      run.workers[k] = serve_worker_process(self, *connection, worker).ending;
      say(name)("ended: " + (run.workers[k] ? std::string("ok") : run.workers[k].error()));
    });
  }
  for (auto& role : roles) role.join();
  if (lost.joinable()) lost.join();
  server.join();
  return run;
}

}  // namespace psgrad::testing
