// Publishes the Coordinator, gathers workers and shard processes, runs the driver, and stops
// everything it started through one cleanup guard. A model with tables adds its table shard registry,
// the table shards once all have joined, their watch, and the checkpoints' and the end's rows.
#include "transport/remote_server.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "caf/openssl/all.hpp"
#include "actors/coordinator.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "actors/sparse_checkpoint_collector.hpp"
#include "actors/table_parts.hpp"
#include "actors/table_shard_registry.hpp"
#include "actors/table_shard_watch.hpp"
#include "actors/training_driver.hpp"
#include "model/run_features.hpp"
#include "model/table_layout.hpp"
#include "payloads/float_buffer.hpp"
#include "payloads/shared_memory.hpp"
#include "runtime/error_text.hpp"
#include "transport/connection_gate.hpp"
#include "transport/join_wait.hpp"
#include "transport/network_words.hpp"
#include "transport/serving_cleanup.hpp"

namespace psgrad {

namespace {

// "gave up waiting for workers after 30 s (cluster.join_timeout_ms): 1 of 2 joined, 3 refused"
std::string gave_up_waiting(const ServeSetup& setup, const JoinTally& tally, std::uint32_t remote_shards) {
  auto text = fmt::format("gave up waiting for workers after {:g} s (cluster.join_timeout_ms): {} of {} joined, {} "
                          "refused",
                          std::chrono::duration<double>(setup.join_timeout).count(), tally.workers_joined.load(),
                          setup.job.cluster.num_workers, tally.refused.load());
  if (remote_shards > 0)
    text += fmt::format(", {} of {} shard processes joined, {} refused", tally.shards_joined.load(), remote_shards,
                        tally.shards_refused.load());
  return text;
}

// Shard 0 of `count` in this process; the others as they joined from their own processes, in shard order.
Result<std::vector<ParameterServerActor>> gather_shards(caf::actor_system& system, const CoordinatorActor& coordinator,
                                                        const TrainingJob& job, const ParameterServerState& whole,
                                                        std::size_t count) {
  auto shards = shard_server_state(job, whole, count);
  if (!shards) return Error{shards.error()};
  Result<std::vector<ParameterServerActor>> remote = Error{"no answer"};
  caf::scoped_actor self{system};
  self->request(coordinator, std::chrono::seconds(10), shards_atom::value)
      .receive([&](std::vector<ParameterServerActor>& joined) { remote = std::move(joined); },
               [&](caf::error& error) {
                 remote = Error{"cannot get the shard processes from the coordinator: " + error_text(system, error)};
               });
  if (!remote) return remote;
  const auto missing = std::count_if(remote->begin(), remote->end(), [](const auto& shard) { return !shard; });
  if (remote->size() != count - 1 || missing > 0)
    return Error{fmt::format("expected {} shard processes, but {} joined", count - 1,
                             remote->size() - static_cast<std::size_t>(missing))};
  std::vector<ParameterServerActor> all = {spawn_parameter_server(system, shards.value()[0])};
  all.insert(all.end(), remote->begin(), remote->end());
  return all;
}

// A resumed run hands shard processes the checkpoint's whole server state; each takes its slice as a
// shard in this process would.
ServerState whole_server_state_of(const TrainingCheckpoint& resume) {
  return ServerState{Weights{resume.version, resume.layout_hash,
                             FloatBuffer::copy_of(resume.weights.data(), resume.weights.size())},
                     resume.optimizer};
}

// TLS: CAF's OpenSSL module publishes, and the TLS handshake (a certificate signed by the run's CA)
// comes before any byte reaches the middleman. Always with an address: CAF 0.17 listens on every
// interface when given none. Plain mode: psgrad's gate owns the port and hands CAF only connections that
// answer its challenge.
Result<std::uint16_t> publish(caf::actor_system& system, const CoordinatorActor& coordinator, const ServeSetup& setup,
                              const std::shared_ptr<JoinTally>& tally, ServingCleanup& cleanup) {
  if (setup.tls) {
    auto port = caf::openssl::publish(coordinator, setup.port, setup.host.c_str(), true);
    if (!port) return Error{listen_failure_text(system, port.error(), setup.host, setup.port)};
    return *port;
  }
  auto gate = gate_publishing(system, coordinator, setup.host, setup.port, setup.token, protocol_version,
                              setup.on_event);
  gate.on_refused_worker = [tally] { ++tally->refused; };
  auto opened = ConnectionGate::open(system, std::move(gate));
  if (!opened) return Error{opened.error()};
  const auto port = (*opened)->port();
  cleanup.guarded_by(std::move(opened).value());
  return port;
}

// A model with tables: what the server builds before it listens, and the table shards once they joined.
struct TablesPart {
  std::shared_ptr<SparseModel> model;  // built for the dev data, whose layout the training data's was checked against
  TableLayout layout;                  // what every worker and table shard process must have built
  std::string row_optimizer;           // its RowOptimizer::name(), for checkpoints
  std::vector<ParameterServerActor> dense_servers;  // the dense part's, one or cluster.servers shards
  // With serve --remote-shards: the dense part's whole state, cut into dense_shards once shards 1.. joined
  // from `psgrad shard --index i` processes (dense_servers is then empty until they have).
  std::shared_ptr<ParameterServerState> dense_state;
  std::size_t dense_shards = 1;
  TableShardRegistryActor registry;
  std::shared_ptr<TableShardLoss> lost_before_run = std::make_shared<TableShardLoss>();
  std::shared_ptr<TableShardLoss> lost = std::make_shared<TableShardLoss>();  // while training
  std::vector<EmbeddingShardActor> shards;
  std::vector<bool> shards_on_this_host;  // their rows come to the evaluator through shared memory
  // The shards again, for the dense server to tell each step's workers (backup workers): filled once
  // every shard has joined, before any step.
  std::shared_ptr<std::vector<EmbeddingShardActor>> shard_list = std::make_shared<std::vector<EmbeddingShardActor>>();
};

Result<TablesPart> make_tables_part(caf::actor_system& system, const ServeSetup& setup, ServingCleanup& cleanup) {
  const auto& job = setup.job;
  const auto& tables = *setup.tables;
  if (job.cluster.servers == 0) return Error{"cluster.servers: at least one table shard is needed"};
  if (!tables.dev) return Error{"no dev data to evaluate on"};
  auto model = SparseModel::build_for_data(job.model, *tables.dev, "dev data");
  if (!model) return Error{model.error()};
  TablesPart part;
  part.model = std::make_shared<SparseModel>(std::move(model).value());
  part.layout = table_layout(*part.model, job.training.seed);
  // The row optimizer's name, for the checkpoints (a table of width 1 builds as any other).
  auto row_optimizer = build_row_optimizer(tables.optimizer, job.optimizer, 1);
  if (!row_optimizer) return Error{row_optimizer.error()};
  part.row_optimizer = (*row_optimizer)->name();
  part.dense_shards = dense_part_shards(job, part.model->dense().layout());
  if (setup.remote_shards && part.dense_shards > 1) {
    auto state = dense_part_state(job, *part.model, setup.resume.get(), part.shard_list);
    if (!state) return Error{state.error()};
    part.dense_state = std::move(state).value();
  } else {
    auto servers = spawn_dense_part_servers(system, job, *part.model, setup.resume.get(), part.shard_list);
    if (!servers) return Error{servers.error()};
    part.dense_servers = std::move(servers).value();
    for (const auto& server : part.dense_servers) cleanup.stop_on_exit(server);
  }

  const auto* resume = setup.resume.get();
  TableShardRegistrySetup registry{static_cast<std::uint32_t>(job.cluster.servers),
                                   part.layout,
                                   setup.config,
                                   tables.dev->num_classes(),
                                   setup.tls ? setup.token : std::string(),
                                   setup.on_event};
  // Sync shards hold at each periodic checkpoint's step until it is gathered; a signal's has none.
  registry.start.checkpoints = setup.on_checkpoint && !setup.checkpoints_on_signal_only;
  if (resume) {
    registry.start.resume = true;
    registry.start.start_iteration = resume->iteration;
    registry.start.version = resume->version;
    registry.resume = setup.resume;
    registry.piece_words = tables.resume_piece_words;
  }
  registry.loss = part.lost_before_run;
  part.registry = spawn_table_shard_registry(system, std::move(registry));
  cleanup.stop_on_exit(part.registry);
  return part;
}

// The table shards, in index order, once every one has joined; introduced to each other.
Status gather_table_shards(caf::actor_system& system, const ServeSetup& setup, const JoinWait& wait,
                           const std::string& host_identity, TablesPart& part, ServingCleanup& cleanup) {
  const auto count = setup.job.cluster.servers;
  const Awaited awaited{[count] { return fmt::format("{} table shards", count); },
                        [&setup, count] {
                          return fmt::format("gave up waiting for {} table shards after {:g} s "
                                             "(cluster.join_timeout_ms)",
                                             count, std::chrono::duration<double>(setup.join_timeout).count());
                        }};
  caf::scoped_actor self{system};
  auto gathered = wait_for_joins(system, wait, awaited, [&](std::chrono::milliseconds slice) {
    caf::error failed;
    self->request(part.registry, slice, table_shards_atom::value, part.layout, std::string("the server"))
        .receive(
            [&](std::vector<TableShardAddress>& joined) {
              for (const auto& shard : joined) {
                part.shards.push_back(shard.shard);
                part.shards_on_this_host.push_back(!host_identity.empty() && shard.host_identity == host_identity);
              }
            },
            [&](caf::error& error) { failed = std::move(error); });
    return failed;
  });
  if (!gathered) return gathered;
  cleanup.table_shards(part.shards);
  *part.shard_list = part.shards;
  return introduce_table_shards(system, setup.job, part.shards);
}

}  // namespace

Result<TrainedRun> serve_training(caf::actor_system& system, const ServeSetup& setup) {
  const auto& job = setup.job;
  const auto* resume = setup.resume.get();
  if (job.cluster.num_workers == 0) return Error{"at least one worker is needed"};
  if (auto offered = check_run_features(job, setup.tables.has_value()); !offered) return Error{offered.error()};
  if (!setup.tables && !setup.dev) return Error{"no dev data to evaluate on"};
  ServingCleanup cleanup(system);
  const auto tally = std::make_shared<JoinTally>();
  CoordinatorSetup coordinator_setup;
  coordinator_setup.config = setup.config;
  coordinator_setup.num_workers = static_cast<std::uint32_t>(job.cluster.num_workers);
  // In plain mode the gate checks the token before CAF sees a byte, so the coordinator need not.
  coordinator_setup.token = setup.tls ? setup.token : std::string();
  coordinator_setup.on_event = setup.on_event;
  coordinator_setup.elastic = job.cluster.elastic;
  if (resume) coordinator_setup.resume_streams = resume->workers;
  coordinator_setup.tally = tally;
  coordinator_setup.data = setup.train_data;

  // The parameters: the dense part's state (its servers are made once the workers joined), or a model's
  // tables part with its dense part's one server.
  std::shared_ptr<ParameterServerState> state;
  std::optional<TablesPart> tables;
  bool shards_elsewhere = false;
  if (setup.tables) {
    auto part = make_tables_part(system, setup, cleanup);
    if (!part) return Error{part.error()};
    tables = std::move(part).value();
    coordinator_setup.layout_hash = tables->layout.hash();
    coordinator_setup.input_width = setup.tables->dev->id_fields.size();  // a worker's "inputs": its id fields
    coordinator_setup.num_classes = setup.tables->dev->num_classes();
    coordinator_setup.tables = tables->registry;
    if (tables->dense_state) {
      // The dense part's shards 1.. in `psgrad shard --index i` processes, as a dense model's.
      coordinator_setup.remote_shards = static_cast<std::uint32_t>(tables->dense_shards - 1);
      coordinator_setup.shard_layout_hash = tables->dense_state->layout.hash();
      coordinator_setup.number_names = setup.tables->dev->number_names;
      if (resume) coordinator_setup.resume_server = whole_server_state_of(*resume);
    }
  } else {
    auto made = initial_server_state(job, setup.dev->width, setup.dev->num_classes, resume);
    if (!made) return Error{made.error()};
    state = std::move(made).value();
    shards_elsewhere = setup.remote_shards && job.cluster.servers > 1;
    coordinator_setup.layout_hash = state->layout.hash();
    coordinator_setup.input_width = setup.dev->width;
    coordinator_setup.num_classes = setup.dev->num_classes;
    coordinator_setup.remote_shards = shards_elsewhere ? static_cast<std::uint32_t>(job.cluster.servers - 1) : 0u;
    if (shards_elsewhere && resume) coordinator_setup.resume_server = whole_server_state_of(*resume);
    limit_payload_floats(state->layout.total_size());
  }
  // Workers and shard processes on this host pass their payloads through shared memory.
  if (job.cluster.shared_memory) {
    coordinator_setup.host_identity = shared_memory_host_identity();
    accept_shared_memory(true);
  }
  const auto host_identity = coordinator_setup.host_identity;
  const auto remote_shards = coordinator_setup.remote_shards;
  auto coordinator = spawn_coordinator(system, std::move(coordinator_setup));
  cleanup.stop_on_exit(coordinator);
  auto port = publish(system, coordinator, setup, tally, cleanup);
  if (!port) return Error{port.error()};
  if (setup.on_listening) setup.on_listening(*port);

  JoinWait wait{setup.join_timeout, setup.interrupt, setup.joiners_gone, {}};
  if (tables) wait.lost = [lost = tables->lost_before_run] { return lost->line(); };
  const Awaited workers_awaited{
      [&] { return fmt::format("workers ({} of {} joined)", tally->workers_joined.load(), job.cluster.num_workers); },
      [&] { return gave_up_waiting(setup, *tally, remote_shards); }};
  std::vector<DataWorkerActor> workers;
  std::vector<std::string> names;
  caf::scoped_actor self{system};
  auto joined = wait_for_joins(system, wait, workers_awaited, [&](std::chrono::milliseconds slice) {
    caf::error failed;
    self->request(coordinator, slice, wait_atom::value)
        .receive(
            [&](std::vector<DataWorkerActor>& joined_workers, std::vector<std::string>& joined_names) {
              workers = std::move(joined_workers);
              names = std::move(joined_names);
            },
            [&](caf::error& error) { failed = std::move(error); });
    return failed;
  });
  if (!joined) return Error{joined.error()};

  std::vector<ParameterServerActor> servers;
  if (tables) {
    if (auto gathered = gather_table_shards(system, setup, wait, host_identity, *tables, cleanup); !gathered) {
      cleanup.run_failed(gathered.error());
      return Error{gathered.error()};
    }
    if (tables->dense_state) {
      auto made = gather_shards(system, coordinator, job, *tables->dense_state, tables->dense_shards);
      if (!made) return Error{made.error()};
      tables->dense_servers = std::move(made).value();
      for (const auto& server : tables->dense_servers) cleanup.stop_on_exit(server);
      cleanup.parameter_shard_processes({tables->dense_servers.begin() + 1, tables->dense_servers.end()});
    }
    servers = tables->dense_servers;
  } else {
    auto made = shards_elsewhere ? gather_shards(system, coordinator, job, *state, job.cluster.servers)
                                 : spawn_parameter_servers(system, job, std::move(state));
    if (!made) return Error{made.error()};
    servers = std::move(made).value();
    for (const auto& server : servers) cleanup.stop_on_exit(server);
    if (shards_elsewhere) cleanup.parameter_shard_processes({servers.begin() + 1, servers.end()});
  }
  EvaluatorSetup evaluation{setup.dev, std::nullopt, setup.on_report, setup.on_snapshot, setup.trace, setup.on_event};
  if (tables) {
    evaluation.tables = EvaluatorTables{setup.tables->dev, tables->shards, kKeysPerPullPart, tables->shards_on_this_host};
    // No worker runs in this process (see EvaluatorThread).
    evaluation.thread = EvaluatorThread::scheduler;
  }
  auto evaluator = spawn_evaluator(system, job, std::move(evaluation));
  if (!evaluator) return Error{evaluator.error()};
  cleanup.stop_on_exit(*evaluator);

  DriverHooks hooks;
  hooks.worker_names = names;
  hooks.on_event = setup.on_event;
  hooks.on_checkpoint = setup.on_checkpoint;
  hooks.checkpoints_on_signal_only = setup.checkpoints_on_signal_only;
  hooks.interrupt = setup.interrupt;
  hooks.trace = setup.trace;
  hooks.stop_early = setup.stop_early;
  if (resume) continue_from(hooks, *resume);
  // The driver steps the dense part's servers; the tables' shards are the workers' and the evaluator's business.
  std::optional<SparseCheckpointCollector> collector;
  if (tables) {
    cleanup.watched_by(
        spawn_table_shard_watch(system, tables->shards, tables->dense_servers, *evaluator, workers, tables->lost));
    hooks.on_worker_lost = tell_shards_of_lost_workers(tables->shards);
    if (setup.on_checkpoint) {
      collector.emplace(system, SparseCheckpointSetup{tables->shards, job.cluster.request_timeout, job.cluster.mode,
                                                      tables->row_optimizer, setup.train_data, setup.config,
                                                      setup.on_checkpoint});
      hooks.on_checkpoint = collector->hook();
    }
  }
  auto driver = spawn_training_driver(system, job, servers, workers, *evaluator, std::move(hooks));
  caf::anon_send(coordinator, driver_atom::value, driver);
  auto run = run_driver(system, driver);  // the driver stops the workers before it answers
  // Every checkpoint taken is written before the shard processes are stopped.
  const auto collected = collector ? collector->wait() : success();
  if (!run) {
    const auto lost = tables ? tables->lost->line() : std::string();
    const auto failure = lost.empty() ? run.error() : lost;
    cleanup.run_failed(failure);
    return Error{failure};
  }
  if (!collected) {
    cleanup.run_failed(collected.error());
    return Error{collected.error()};
  }
  if (!tables || !setup.tables->collect_rows) return TrainedRun{std::move(run).value(), {}};
  auto rows = collect_tables(system, job, tables->shards, *tables->model, run->final_weights.version);
  if (!rows) {
    cleanup.run_failed(rows.error());
    return Error{rows.error()};
  }
  return TrainedRun{std::move(run).value(), std::move(rows).value()};
}

}  // namespace psgrad
