#include "transport/sparse_remote_server.hpp"

#include <optional>
#include <vector>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "caf/openssl/all.hpp"
#include "actors/coordinator.hpp"
#include "actors/local_training.hpp"
#include "actors/sparse_checkpoint_collector.hpp"
#include "actors/evaluator.hpp"
#include "actors/table_parts.hpp"
#include "actors/table_shard_registry.hpp"
#include "actors/table_shard_watch.hpp"
#include "actors/training_driver.hpp"
#include "model/run_features.hpp"
#include "model/table_layout.hpp"
#include "payloads/shared_memory.hpp"
#include "runtime/error_text.hpp"
#include "transport/connection_gate.hpp"
#include "transport/network_words.hpp"

namespace psgrad {

namespace {

// Stops what serve_sparse_training started, whichever way it returns: the watch first (the shards' ends
// are no losses), then each table shard process (with the run's failure as the reason when it failed,
// waiting for each to go down so they exit before this process does), the port, the local actors.
class SparseServingCleanup {
 public:
  explicit SparseServingCleanup(caf::actor_system& system) : system_(system) {}
  SparseServingCleanup(const SparseServingCleanup&) = delete;
  SparseServingCleanup& operator=(const SparseServingCleanup&) = delete;

  ~SparseServingCleanup() {
    caf::scoped_actor self{system_};
    // Down before a shard is stopped: a shard's end that reached the watch first would count as a loss.
    if (watch_) {
      self->monitor(watch_);
      self->send_exit(watch_, caf::exit_reason::user_shutdown);
      self->receive([](const caf::down_msg&) {}, caf::after(std::chrono::seconds(5)) >> [] {});
      watch_ = nullptr;
    }
    for (const auto& shard : shards_) {
      self->monitor(shard);
      self->send_exit(shard, failure_ ? caf::make_error(caf::sec::runtime_error, *failure_)
                                      : caf::error{caf::exit_reason::user_shutdown});
      self->receive([](const caf::down_msg&) {}, caf::after(std::chrono::seconds(5)) >> [] {});
    }
    gate_.reset();
    for (const auto& actor : actors_) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  }

  template <class Handle>
  void stop_on_exit(const Handle& actor) {
    actors_.push_back(caf::actor_cast<caf::actor>(actor));
  }
  void guarded_by(std::unique_ptr<ConnectionGate> gate) { gate_ = std::move(gate); }
  void table_shards(std::vector<EmbeddingShardActor> shards) { shards_ = std::move(shards); }
  void watched_by(caf::actor watch) { watch_ = std::move(watch); }
  void run_failed(const std::string& why) { failure_ = why; }

 private:
  caf::actor_system& system_;
  std::unique_ptr<ConnectionGate> gate_;
  std::vector<caf::actor> actors_;
  std::vector<EmbeddingShardActor> shards_;
  caf::actor watch_;
  std::optional<std::string> failure_;
};

Result<std::uint16_t> publish(caf::actor_system& system, const CoordinatorActor& coordinator,
                              const SparseServeSetup& setup, SparseServingCleanup& cleanup) {
  if (setup.tls) {
    auto port = caf::openssl::publish(coordinator, setup.port, setup.host.c_str(), true);
    if (!port) return Error{listen_failure_text(system, port.error(), setup.host, setup.port)};
    return *port;
  }
  auto opened = ConnectionGate::open(system, gate_publishing(system, coordinator, setup.host, setup.port, setup.token,
                                                             protocol_version, setup.on_event));
  if (!opened) return Error{opened.error()};
  const auto port = (*opened)->port();
  cleanup.guarded_by(std::move(opened).value());
  return port;
}

// Asks `ask` (a slice's length -> the error of its answer, none when it came) in slices of 200 ms
// until it answers, the join timeout passes, a signal comes or a table shard that joined is lost.
template <class Ask>
Status wait_in_slices(caf::actor_system& system, const SparseServeSetup& setup, const TableShardLoss& loss,
                      const std::string& what, Ask ask) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + setup.join_timeout;
  for (;;) {
    const caf::error error = ask(std::chrono::milliseconds(200));
    // A signal that came while the last of them joined still came before training: nothing is run.
    if (setup.interrupt && setup.interrupt->load() != 0)
      return Error{fmt::format("stopped by a signal while waiting for {}; nothing to save yet", what)};
    if (!error) return success();
    if (error != caf::sec::request_timeout)
      return Error{fmt::format("waiting for {}: {}", what, error_text(system, error))};
    if (const auto lost = loss.line(); !lost.empty()) return Error{lost};
    if (setup.joiners_gone)
      if (auto gone = setup.joiners_gone(); !gone.empty()) return Error{gone};
    if (setup.join_timeout.count() > 0 && Clock::now() >= deadline)
      return Error{fmt::format("gave up waiting for {} after {:g} s (cluster.join_timeout_ms)", what,
                               std::chrono::duration<double>(setup.join_timeout).count())};
  }
}

}  // namespace

Result<TrainedRun> serve_sparse_training(caf::actor_system& system, const SparseServeSetup& setup) {
  const auto& job = setup.job;
  if (job.cluster.num_workers == 0) return Error{"at least one worker is needed"};
  if (job.cluster.servers == 0) return Error{"cluster.servers: at least one table shard is needed"};
  if (auto offered = check_run_features(job, true); !offered) return Error{offered.error()};
  if (!setup.dev) return Error{"no dev data to evaluate on"};
  // Built for the dev data's layout, which the training data's was checked against: its number columns too.
  auto model = SparseModel::build_for_data(job.model, *setup.dev, "dev data");
  if (!model) return Error{model.error()};
  const auto layout = table_layout(*model, job.training.seed);
  // The row optimizer's name, for the checkpoints (a table of width 1 builds as any other).
  auto row_optimizer = build_row_optimizer(setup.tables, job.optimizer, 1);
  if (!row_optimizer) return Error{row_optimizer.error()};
  const auto* resume = setup.resume.get();
  SparseServingCleanup cleanup(system);
  auto dense_server = spawn_dense_server(system, job, *model, resume ? &*resume : nullptr);
  if (!dense_server) return Error{dense_server.error()};
  cleanup.stop_on_exit(*dense_server);

  // In plain mode the gate checks the token before CAF sees a byte, so the coordinator need not.
  const auto hello_token = setup.tls ? setup.token : std::string();
  const auto shard_count = static_cast<std::uint32_t>(job.cluster.servers);
  TableShardRegistrySetup registry_setup{shard_count, layout, setup.config, setup.dev->num_classes(), hello_token,
                                        setup.on_event};
  // Sync shards hold at each periodic checkpoint's step until it is gathered; a signal's has none.
  registry_setup.start.checkpoints = setup.on_checkpoint && !setup.checkpoints_on_signal_only;
  if (resume) {
    registry_setup.start.resume = true;
    registry_setup.start.start_iteration = resume->iteration;
    registry_setup.start.version = resume->version;
    registry_setup.resume = setup.resume;
    registry_setup.piece_words = setup.resume_piece_words;
  }
  const auto lost_before_run = std::make_shared<TableShardLoss>();
  registry_setup.loss = lost_before_run;
  auto registry = spawn_table_shard_registry(system, std::move(registry_setup));
  cleanup.stop_on_exit(registry);
  CoordinatorSetup coordinator_setup;
  coordinator_setup.config = setup.config;
  coordinator_setup.num_workers = static_cast<std::uint32_t>(job.cluster.num_workers);
  coordinator_setup.token = hello_token;
  coordinator_setup.layout_hash = layout.hash();
  coordinator_setup.input_width = setup.dev->id_fields.size();  // a sparse worker's "inputs": its id fields
  coordinator_setup.num_classes = setup.dev->num_classes();
  coordinator_setup.on_event = setup.on_event;
  coordinator_setup.data = setup.train_data;
  coordinator_setup.tables = registry;
  if (resume) coordinator_setup.resume_streams = resume->workers;
  // Workers on this host pass the dense gradient and weights through shared memory.
  if (job.cluster.shared_memory) {
    coordinator_setup.host_identity = shared_memory_host_identity();
    accept_shared_memory(true);
  }
  const auto host_identity = coordinator_setup.host_identity;
  auto coordinator = spawn_coordinator(system, std::move(coordinator_setup));
  cleanup.stop_on_exit(coordinator);
  auto port = publish(system, coordinator, setup, cleanup);
  if (!port) return Error{port.error()};
  if (setup.on_listening) setup.on_listening(*port);

  caf::scoped_actor self{system};
  std::vector<DataWorkerActor> workers;
  std::vector<std::string> names;
  auto joined = wait_in_slices(system, setup, *lost_before_run, fmt::format("{} workers", job.cluster.num_workers), [&](auto slice) {
    caf::error failed;
    self->request(coordinator, slice, wait_atom::value)
        .receive(
            [&](std::vector<DataWorkerActor>& w, std::vector<std::string>& n) {
              workers = std::move(w);
              names = std::move(n);
            },
            [&](caf::error& error) { failed = std::move(error); });
    return failed;
  });
  if (!joined) return Error{joined.error()};
  std::vector<EmbeddingShardActor> shards;
  std::vector<bool> shards_on_this_host;  // their rows come to the evaluator through shared memory
  auto gathered = wait_in_slices(system, setup, *lost_before_run, fmt::format("{} table shards", shard_count), [&](auto slice) {
    caf::error failed;
    self->request(registry, slice, table_shards_atom::value, layout, std::string("the server"))
        .receive(
            [&](std::vector<TableShardAddress>& joined_shards) {
              for (const auto& shard : joined_shards) {
                shards.push_back(shard.shard);
                shards_on_this_host.push_back(!host_identity.empty() && shard.host_identity == host_identity);
              }
            },
            [&](caf::error& error) { failed = std::move(error); });
    return failed;
  });
  if (!gathered) return Error{gathered.error()};
  cleanup.table_shards(shards);
  if (auto introduced = introduce_table_shards(system, job, shards); !introduced) {
    cleanup.run_failed(introduced.error());
    return Error{introduced.error()};
  }
  // No worker runs in this process (see EvaluatorThread).
  auto evaluator = spawn_evaluator(system, job,
                                   EvaluatorSetup{nullptr, EvaluatorTables{setup.dev, shards, kKeysPerPullPart, shards_on_this_host},
                                                  setup.on_report, setup.on_snapshot, setup.trace, setup.on_event,
                                                  EvaluatorThread::scheduler});
  if (!evaluator) return Error{evaluator.error()};
  cleanup.stop_on_exit(*evaluator);
  const auto loss = std::make_shared<TableShardLoss>();
  cleanup.watched_by(spawn_table_shard_watch(system, shards, *dense_server, *evaluator, workers, loss));

  DriverHooks hooks;
  hooks.worker_names = names;
  hooks.on_event = setup.on_event;
  hooks.on_worker_lost = tell_shards_of_lost_workers(shards);
  hooks.interrupt = setup.interrupt;
  hooks.stop_early = setup.stop_early;
  hooks.trace = setup.trace;
  if (resume) continue_from(hooks, *resume);
  std::optional<SparseCheckpointCollector> collector;
  if (setup.on_checkpoint) {
    collector.emplace(system, SparseCheckpointSetup{shards, job.cluster.request_timeout, job.cluster.mode,
                                                    (*row_optimizer)->name(), setup.train_data, setup.config,
                                                    setup.on_checkpoint});
    hooks.on_checkpoint = collector->hook();
    hooks.checkpoints_on_signal_only = setup.checkpoints_on_signal_only;
  }
  // The driver sees one parameter server: the tables' shards are the workers' and the evaluator's business.
  TrainingJob dense_job = job;
  dense_job.cluster.servers = 1;
  auto driver = spawn_training_driver(system, dense_job, *dense_server, workers, *evaluator, std::move(hooks));
  caf::anon_send(coordinator, driver_atom::value, driver);
  auto run = run_driver(system, driver);
  // Every checkpoint taken is written before the shard processes are stopped.
  const auto collected = collector ? collector->wait() : success();
  if (run && !collected) {
    cleanup.run_failed(collected.error());
    return Error{collected.error()};
  }
  if (!run) {
    const auto lost = loss->line();
    const auto failure = lost.empty() ? run.error() : lost;
    cleanup.run_failed(failure);
    return Error{failure};
  }
  if (!setup.collect_tables) return TrainedRun{std::move(run).value(), {}};
  auto rows = collect_tables(system, job, shards, *model, run->final_weights.version);
  if (!rows) {
    cleanup.run_failed(rows.error());
    return Error{rows.error()};
  }
  return TrainedRun{std::move(run).value(), std::move(rows).value()};
}

}  // namespace psgrad
