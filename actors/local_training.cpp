#include "actors/local_training.hpp"

#include "caf/scheduler/abstract_coordinator.hpp"

#include <limits>

#include <fmt/format.h>

#include "caf/scoped_actor.hpp"
#include "actors/data_worker.hpp"
#include "runtime/error_text.hpp"
#include "actors/parameter_server.hpp"
#include "actors/shard_state.hpp"
#include "actors/sparse_checkpoint_collector.hpp"
#include "actors/training_driver.hpp"
#include "model/norm_chunks.hpp"
#include "model/run_features.hpp"
#include "model/sparse_data_fingerprint.hpp"

namespace psgrad {

Result<std::shared_ptr<ParameterServerState>> initial_server_state(
    const TrainingJob& job, std::size_t input_width, std::size_t output_width, const TrainingCheckpoint* resume) {
  auto model = build_initialized_model(job, input_width, output_width);
  if (!model) return Error{model.error()};
  return dense_server_state(job, model->layout(), std::vector<float>(model->weights().begin(), model->weights().end()),
                            resume);
}

Result<std::shared_ptr<ParameterServerState>> dense_server_state(const TrainingJob& job, ParameterLayout layout,
                                                                 std::vector<float> weights,
                                                                 const TrainingCheckpoint* resume) {
  auto optimizer = build_optimizer(job, layout);
  if (!optimizer) return Error{optimizer.error()};
  auto state = std::make_shared<ParameterServerState>();
  state->layout = std::move(layout);
  state->weights = std::move(weights);
  state->optimizer = std::move(optimizer).value();
  state->mode = job.cluster.mode;
  state->wire = job.cluster.wire;
  state->ordered_answers = job.cluster.ordered_answers;
  state->pipelined = job.cluster.pipeline && job.cluster.mode == TrainingMode::sync;
  if (resume) {
    if (const auto differs = state->layout.mismatch(resume->layout_hash, resume->weights.size()))
      return Error{fmt::format("checkpoint is for another model ({})", *differs)};
    if (!state->optimizer->set_state(resume->optimizer))
      return Error{fmt::format("checkpoint's optimizer state does not fit {}", job.optimizer.name)};
    state->weights = resume->weights;
    state->version = resume->version;
  }
  return state;
}

namespace {

// One optimizer per shard, each restricted to its floats and, when resuming, given its part of the
// whole state; empty when the optimizer cannot be restricted to these cuts.
Result<std::vector<std::unique_ptr<Optimizer>>> shard_optimizers(const TrainingJob& job,
                                                                 const ParameterServerState& whole,
                                                                 const std::vector<std::size_t>& cuts) {
  const auto whole_state = whole.optimizer->state();
  std::vector<std::unique_ptr<Optimizer>> optimizers;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    auto optimizer = build_optimizer(job, whole.layout);
    if (!optimizer) return Error{optimizer.error()};
    if (!(*optimizer)->restrict_to(cuts[i], cuts[i + 1])) return std::vector<std::unique_ptr<Optimizer>>{};
    if (!(*optimizer)->set_state(slice_optimizer_state(whole_state, whole.layout.total_size(), cuts[i], cuts[i + 1])))
      return Error{fmt::format("the optimizer state does not split into {} shards", cuts.size() - 1)};
    optimizers.push_back(std::move(optimizer).value());
  }
  return optimizers;
}

}  // namespace

Result<std::vector<std::size_t>> server_shard_cuts(const TrainingJob& job, const ParameterLayout& layout,
                                                   std::size_t count) {
  // Whether every shard's optimizer can own its floats; each check builds the shard's optimizer.
  const auto optimizers_accept = [&](const std::vector<std::size_t>& cuts) -> Result<bool> {
    if (cuts.empty()) return false;
    for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
      auto optimizer = build_optimizer(job, layout);
      if (!optimizer) return Error{optimizer.error()};
      if (!(*optimizer)->restrict_to(cuts[i], cuts[i + 1])) return false;
    }
    return true;
  };
  // Balanced by floats, cut inside arrays on the optimizer's chunk grid; where the optimizer cannot
  // own part of an array (coupled L2 needs the whole array's weights), on array boundaries.
  constexpr std::size_t whole_arrays = std::numeric_limits<std::size_t>::max();
  bool inner_cuts_refused = false;
  for (const auto grain : {norm_chunk_size, whole_arrays}) {
    auto cuts = shard_cuts(layout, count, grain);
    auto accepted = optimizers_accept(cuts);
    if (!accepted) return Error{accepted.error()};
    if (*accepted) return cuts;
    if (grain == norm_chunk_size && !cuts.empty()) inner_cuts_refused = true;
  }
  const auto most = inner_cuts_refused ? layout.array_count() : max_shard_count(layout, norm_chunk_size);
  return Error{fmt::format("cannot split the model's {} parameter arrays ({} floats) into {} server shards for {}: "
                           "at most {}",
                           layout.array_count(), layout.total_size(), count, job.optimizer.name, most)};
}

Result<std::vector<std::shared_ptr<ParameterServerState>>> shard_server_state(
    const TrainingJob& job, const ParameterServerState& whole, std::size_t count) {
  auto cuts = server_shard_cuts(job, whole.layout, count);
  if (!cuts) return Error{cuts.error()};
  auto optimizers = shard_optimizers(job, whole, *cuts);
  if (!optimizers) return Error{optimizers.error()};
  if (optimizers->empty())
    return Error{fmt::format("cannot split the {} parameter arrays into {} server shards for {}",
                             whole.layout.array_count(), count, job.optimizer.name)};
  std::vector<std::shared_ptr<ParameterServerState>> shards;
  for (std::size_t i = 0; i + 1 < cuts->size(); ++i) {
    auto shard = std::make_shared<ParameterServerState>();
    shard->layout = whole.layout;
    shard->mode = whole.mode;
    shard->wire = whole.wire;
    shard->ordered_answers = whole.ordered_answers;
    shard->pipelined = whole.pipelined;
    shard->version = whole.version;
    shard->begin = (*cuts)[i];
    shard->end = (*cuts)[i + 1];
    shard->weights.assign(whole.weights.begin() + static_cast<std::ptrdiff_t>(shard->begin),
                          whole.weights.begin() + static_cast<std::ptrdiff_t>(shard->end));
    shard->optimizer = std::move((*optimizers)[i]);
    // The first shard chooses each step's workers (backup workers), so it tells whoever else must know.
    if (i == 0) shard->on_step_workers = whole.on_step_workers;
    shards.push_back(std::move(shard));
  }
  return shards;
}

Result<std::vector<ParameterServerActor>> spawn_parameter_servers(
    caf::actor_system& system, const TrainingJob& job, std::shared_ptr<ParameterServerState> whole) {
  if (job.cluster.servers <= 1) return std::vector<ParameterServerActor>{spawn_parameter_server(system, std::move(whole))};
  auto shards = shard_server_state(job, *whole, job.cluster.servers);
  if (!shards) return Error{shards.error()};
  std::vector<ParameterServerActor> servers;
  for (auto& shard : *shards) servers.push_back(spawn_parameter_server(system, shard));
  return servers;
}

// No more computing threads than the scheduler has (one per core by default). Fewer workers than
// that get a thread each, and the server a scheduler thread of its own. As many or more share the
// scheduler's threads, each gradient run to the end: the OS would otherwise slice every worker's
// compute into pieces (a sync step waits for the last piece), and the server's step runs on the
// thread of the worker that pushed instead of waking another. With 2 workers on 2 cores, alternating
// the two in one sitting, sharing gave 7-13% more samples/s in sync (4 of 4 pairs) and 4-22% in
// async (3 of 4); with 1 worker the detached one was as fast or faster (6 of 7 pairs).
bool workers_detached(std::size_t workers, std::size_t threads) { return workers < threads; }

// With the workers on the scheduler's threads, a sync step waits for the last gradient while the first
// worker's thread has nothing to do; asleep, it took 60-95 µs to wake for its answer on this kind of
// VM, after the step's 55-75 µs, on every step. Polling for 200 µs covers the step and most of the
// spread between two workers' gradients. Measured with `psgrad train`, alternated, medians of 4-5:
// sync 2 workers 257k -> 273k samples/s on a quiet host, 162k -> 216k on a busy one; sync 4 workers
// 233k -> 247k; async 2 and 4 workers unchanged (their threads rarely idle). Detached workers leave the
// scheduler only the server and the driver between gradients: polling there only burns a core (sync
// 1 worker 116k without, 107k with).
std::chrono::microseconds local_idle_poll(std::size_t workers, std::size_t threads, std::size_t cores) {
  if (workers_detached(workers, threads) || threads > cores) return std::chrono::microseconds{0};
  return std::chrono::microseconds{200};
}

void prepare_local_run(ActorConfig& config, std::size_t workers) {
  config.poll_when_idle(local_idle_poll(workers, config.threads()));
  // Detached workers wait for each answer on a core of their own while the server steps: helping
  // with the step's passes there measured 2-4% more samples/s with 1 worker on 2 cores (alternated
  // `psgrad train`, 6 of 7 pairs). A waiting worker spins, for at most 300 µs a push; with more
  // threads than cores that core is another's.
  if (workers_detached(workers, config.threads()) && config.threads() <= std::thread::hardware_concurrency())
    config.split_server_steps();
}

std::optional<WorkerStreamState> resumed_stream(const std::optional<TrainingCheckpoint>& resume,
                                                std::size_t worker) {
  if (!resume) return std::nullopt;
  for (const auto& stream : resume->workers)
    if (stream.worker == worker) return stream;
  return std::nullopt;
}

namespace {

// Stops the actors of a run in this process, whichever way it returns: local actors would otherwise live
// on until the system shuts down.
class LocalActors {
 public:
  LocalActors() = default;
  LocalActors(const LocalActors&) = delete;
  LocalActors& operator=(const LocalActors&) = delete;
  ~LocalActors() {
    for (const auto& actor : actors_) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  }
  template <class Handle>
  void stop_on_exit(const Handle& actor) {
    actors_.push_back(caf::actor_cast<caf::actor>(actor));
  }

 private:
  std::vector<caf::actor> actors_;
};

// The dense arrays' servers: one, or job.cluster.servers shards.
Result<std::vector<ParameterServerActor>> spawn_dense_servers(caf::actor_system& system, const TrainingJob& job,
                                                              const InProcessRun& run) {
  if (!run.train || !run.dev) return Error{"no training or dev data"};
  auto state = initial_server_state(job, run.train->width, run.train->num_classes, run.resume ? &*run.resume : nullptr);
  if (!state) return Error{state.error()};
  return spawn_parameter_servers(system, job, std::move(state).value());
}

// Workers on the scheduler's threads compute at most as many gradients at once as there are threads, so
// they share that many models.
std::shared_ptr<ModelWorkspaces> shared_workspaces(caf::actor_system& system, const TrainingJob& job,
                                                   const Dataset& train) {
  auto workspaces = std::make_shared<ModelWorkspaces>([job, width = train.width, classes = train.num_classes] {
    // The job's model was built once already (the server's), so building it again cannot fail.
    auto model = std::make_unique<Model>(build_model(job, width, classes).value());
    model->reserve(job.training.batch_size);
    return model;
  });
  workspaces->reserve(system.scheduler().num_workers());
  return workspaces;
}

}  // namespace

Result<TrainedRun> train_in_process(caf::actor_system& system, const TrainingJob& job, InProcessRun run) {
  if (job.cluster.num_workers == 0) return Error{"at least one worker is needed"};
  if (auto offered = check_run_features(job, run.tables.has_value()); !offered) return Error{offered.error()};
  auto& hooks = run.hooks;
  const auto& resume = run.resume;
  if (resume) continue_from(hooks, *resume);
  LocalActors actors;
  // The parameters: the dense arrays' servers, and a model's tables on their shards.
  std::optional<LocalTables> tables;
  std::vector<ParameterServerActor> servers;
  if (run.tables) {
    // Sync shards hold at each periodic checkpoint's step until it is gathered; a signal's has none.
    const bool periodic_checkpoints = hooks.on_checkpoint && !hooks.checkpoints_on_signal_only;
    auto spawned = spawn_local_tables(system, job, *run.tables, hooks.start_iteration, periodic_checkpoints, resume);
    if (!spawned) return Error{spawned.error()};
    tables = std::move(spawned).value();
    servers = tables->dense_servers;
    for (const auto& shard : tables->shards) actors.stop_on_exit(shard);
  } else {
    auto spawned = spawn_dense_servers(system, job, run);
    if (!spawned) return Error{spawned.error()};
    servers = std::move(spawned).value();
  }
  for (const auto& server : servers) actors.stop_on_exit(server);
  // A worker of a model with tables stays on the scheduler: detached, one kept a test's actor system from
  // shutting down while a sync table shard held its pull.
  const bool detached = !tables && workers_detached(job.cluster.num_workers, system.scheduler().num_workers());
  const auto workspaces = tables || detached ? nullptr : shared_workspaces(system, job, *run.train);
  std::vector<DataWorkerActor> workers;
  for (std::size_t k = 0; k < job.cluster.num_workers; ++k) {
    DataWorkerSetup setup{job, k, run.train, worker_delay(job, k), resumed_stream(resume, k),
                          detached, {}, workspaces, detached ? idle_help_of(system) : nullptr};
    if (tables) setup.tables = WorkerTables{run.tables->train, tables->shards, {}};
    auto worker = spawn_data_worker(system, std::move(setup));
    if (!worker) return Error{worker.error()};
    actors.stop_on_exit(worker->actor);
    workers.push_back(worker->actor);
  }
  EvaluatorSetup evaluation{run.dev, std::nullopt, std::move(run.on_report), std::move(run.on_snapshot), hooks.trace,
                            hooks.on_event};
  if (tables) evaluation.tables = EvaluatorTables{run.tables->dev, tables->shards};
  auto evaluator = spawn_evaluator(system, job, std::move(evaluation));
  if (!evaluator) return Error{evaluator.error()};
  actors.stop_on_exit(*evaluator);
  // The driver steps the dense arrays' servers; the tables' shards are the workers' and the evaluator's business.
  std::optional<SparseCheckpointCollector> collector;
  if (tables) {
    if (hooks.on_checkpoint) {
      collector.emplace(system, SparseCheckpointSetup{tables->shards, job.cluster.request_timeout, job.cluster.mode,
                                                      tables->row_optimizer,
                                                      fingerprint_of(*run.tables->train, run.tables->train->origin),
                                                      std::move(run.config), std::move(hooks.on_checkpoint)});
      hooks.on_checkpoint = collector->hook();
    }
    hooks.on_worker_lost = tell_shards_of_lost_workers(tables->shards);
  }
  auto driver = spawn_training_driver(system, job, servers, workers, *evaluator, std::move(hooks));
  auto summary = run_driver(system, driver);
  // Every checkpoint taken is written before the shards go.
  const auto collected = collector ? collector->wait() : success();
  if (!summary) return Error{summary.error()};
  if (!collected) return Error{collected.error()};
  if (!tables) return TrainedRun{std::move(summary).value(), {}};
  auto rows = collect_tables(system, job, tables->shards, *tables->model, summary->final_weights.version);
  if (!rows) return Error{rows.error()};
  return TrainedRun{std::move(summary).value(), std::move(rows).value()};
}

Result<TrainingSummary> train_in_process(caf::actor_system& system, const TrainingJob& job,
                                         std::shared_ptr<const Dataset> train,
                                         std::shared_ptr<const Dataset> dev, ReportCallback on_report,
                                         DriverHooks hooks, const std::optional<TrainingCheckpoint>& resume,
                                         SnapshotCallback on_snapshot) {
  InProcessRun run{std::move(train), std::move(dev), std::nullopt, std::move(on_report), std::move(on_snapshot),
                   std::move(hooks), resume, {}};
  auto trained = train_in_process(system, job, std::move(run));
  if (!trained) return Error{trained.error()};
  return std::move(trained->run);
}

Result<TrainingSummary> run_driver(caf::actor_system& system, const TrainingDriverActor& driver) {
  caf::scoped_actor self{system};
  Result<TrainingSummary> outcome = Error{"training did not report back"};
  self->request(driver, caf::infinite, run_atom::value)
      .receive([&](TrainingSummary& summary) { outcome = std::move(summary); },
               [&](caf::error& error) { outcome = Error{error_text(system, error)}; });
  return outcome;
}

}  // namespace psgrad
