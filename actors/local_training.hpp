// Training with every actor in this process, for every model: spawn the parameters' servers (and a model's
// table shards), the workers, the evaluator and the driver, run.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "caf/actor.hpp"
#include "caf/actor_system.hpp"
#include "actors/actor_config.hpp"
#include "actors/evaluator.hpp"
#include "payloads/messages.hpp"
#include "actors/parameter_server.hpp"
#include "actors/table_parts.hpp"
#include "actors/trained_run.hpp"
#include "actors/training_driver.hpp"
#include "actors/training_job.hpp"
#include "model/dataset.hpp"

namespace psgrad {

// The server's starting state: the initialized model's weights, its layout and a fresh optimizer.
// With resume, the checkpoint's weights, optimizer state and step count instead, once its layout
// has been checked against the job's model.
Result<std::shared_ptr<ParameterServerState>> initial_server_state(
    const TrainingJob& job, std::size_t input_width, std::size_t output_width,
    const TrainingCheckpoint* resume = nullptr);

// The same for any model's dense arrays, from their layout and initial weights: the job's optimizer,
// mode, wire and pipeline (a model with tables takes its dense part's server from here too).
Result<std::shared_ptr<ParameterServerState>> dense_server_state(const TrainingJob& job, ParameterLayout layout,
                                                                 std::vector<float> weights,
                                                                 const TrainingCheckpoint* resume);

// Where `count` shards split the layout's floats: about total / count each, cut inside arrays where
// every shard's optimizer allows, else on array boundaries. An error says how many shards could be.
Result<std::vector<std::size_t>> server_shard_cuts(const TrainingJob& job, const ParameterLayout& layout,
                                                   std::size_t count);

// The whole server state split into `count` shards of about total / count floats each (cut inside
// arrays where the optimizer allows), each with its own optimizer restricted to its floats; a resumed
// state's optimizer state is split along.
Result<std::vector<std::shared_ptr<ParameterServerState>>> shard_server_state(
    const TrainingJob& job, const ParameterServerState& whole, std::size_t count);

// Spawns one server, or job.cluster.servers shards.
Result<std::vector<ParameterServerActor>> spawn_parameter_servers(
    caf::actor_system& system, const TrainingJob& job, std::shared_ptr<ParameterServerState> whole);

// Whether a local run gives each of its `workers` a thread of its own (fewer workers than the
// scheduler's `threads`) or runs them on the scheduler's threads (local_training.cpp says why).
bool workers_detached(std::size_t workers, std::size_t threads);

// How long an idle scheduler thread polls for work before it sleeps (ActorConfig::poll_when_idle) in a
// local run of `workers` on `threads` scheduler threads: zero when each worker has a thread of its own,
// or when there are more threads than `cores` (a polling thread would take a core from a computing one).
std::chrono::microseconds local_idle_poll(std::size_t workers, std::size_t threads,
                                          std::size_t cores = std::thread::hardware_concurrency());

// Sets up `config` for a local run of `workers` (before the actor system is made): its idle threads
// poll as local_idle_poll says, and detached workers take on half of a server step while they wait
// (unless there are more scheduler threads than cores).
void prepare_local_run(ActorConfig& config, std::size_t workers);

// The stream a resumed worker continues, if the checkpoint has one for it.
std::optional<WorkerStreamState> resumed_stream(const std::optional<TrainingCheckpoint>& resume,
                                                std::size_t worker);

// A run in this process: its data, by the model's parameter kinds, and what it reports and continues from.
struct InProcessRun {
  std::shared_ptr<const Dataset> train, dev;  // a model of dense arrays: its float matrices
  std::optional<RunTables> tables;            // a model with tables: its named columns (then train, dev unused)
  ReportCallback on_report;
  SnapshotCallback on_snapshot;
  // hooks.on_checkpoint receives each checkpoint the driver takes, in the order taken; with tables, once
  // every shard's rows at its step (sync: exactly that step) and the training data's fingerprint are in it.
  DriverHooks hooks;
  std::optional<TrainingCheckpoint> resume;  // refused before anything is spawned when it does not fit
  std::string config;  // the run's config text, given to each checkpoint with tables (so its rows are never copied)
};

// A run of a model with tables on named columns, its rows stepping with `optimizer`.
inline InProcessRun run_on_columns(std::shared_ptr<const SparseDataset> train, std::shared_ptr<const SparseDataset> dev,
                                   TableOptimizerChoice optimizer = {}) {
  InProcessRun run;
  run.tables = RunTables{std::move(train), std::move(dev), std::move(optimizer)};
  return run;
}

// What model/run_features.hpp does not offer for a model with tables is refused in one line.
Result<TrainedRun> train_in_process(caf::actor_system& system, const TrainingJob& job, InProcessRun run);

// A model of dense arrays, on float matrices.
Result<TrainingSummary> train_in_process(caf::actor_system& system, const TrainingJob& job,
                                         std::shared_ptr<const Dataset> train,
                                         std::shared_ptr<const Dataset> dev, ReportCallback on_report,
                                         DriverHooks hooks = {},
                                         const std::optional<TrainingCheckpoint>& resume = std::nullopt,
                                         SnapshotCallback on_snapshot = {});

// Sends the driver its run request and blocks until the summary (or the error) comes back.
Result<TrainingSummary> run_driver(caf::actor_system& system, const TrainingDriverActor& driver);

}  // namespace psgrad
