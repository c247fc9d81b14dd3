// Publishes the Coordinator, gathers workers and shard processes, runs the driver, and stops
// everything it started through one cleanup guard.
#include "transport/remote_server.hpp"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "caf/openssl/all.hpp"
#include "transport/connection_gate.hpp"
#include "actors/coordinator.hpp"
#include "runtime/error_text.hpp"
#include "payloads/float_buffer.hpp"
#include "transport/network_words.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "payloads/shared_memory.hpp"
#include "actors/training_driver.hpp"

namespace psgrad {

namespace {

// Stops what serve_training started, whichever way it returns: the shard processes first (with an
// acknowledged request, so they exit cleanly before this process goes away), then the published
// port, the local actors and the coordinator.
class ServingCleanup {
 public:
  ServingCleanup(caf::actor_system& system, CoordinatorActor coordinator)
      : system_(system), coordinator_(std::move(coordinator)) {}
  ServingCleanup(const ServingCleanup&) = delete;
  ServingCleanup& operator=(const ServingCleanup&) = delete;

  ~ServingCleanup() {
    if (!remote_shards_.empty()) {
      caf::scoped_actor self{system_};
      // A failed run ends its shards with the failure as their exit reason (their processes say why
      // and exit non-zero), and waits for each to go down.
      for (const auto& shard : remote_shards_) {
        if (run_failure_) {
          self->monitor(shard);
          self->send_exit(shard, caf::make_error(caf::sec::runtime_error, *run_failure_));
          self->receive([](const caf::down_msg&) {}, caf::after(std::chrono::seconds(5)) >> [] {});
        } else {
          self->request(shard, std::chrono::seconds(5), stop_atom::value).receive([](bool) {}, [](caf::error&) {});
        }
      }
    }
    // A plain port is the gate's, closed with it. CAF 0.17.6's openssl::unpublish does not compile (it
    // uses a 0.18 atom); a TLS port closes when the actor system shuts down instead.
    gate_.reset();
    for (const auto& actor : actors_) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(coordinator_, caf::exit_reason::user_shutdown);
  }

  const CoordinatorActor& coordinator() const { return coordinator_; }
  void guarded_by(std::unique_ptr<ConnectionGate> gate) { gate_ = std::move(gate); }
  template <class Handle>
  void stop_on_exit(const Handle& actor) {
    actors_.push_back(caf::actor_cast<caf::actor>(actor));
  }
  void stop_shard_processes_on_exit(std::vector<ParameterServerActor> shards) { remote_shards_ = std::move(shards); }
  void run_failed(const std::string& why) { run_failure_ = why; }

 private:
  caf::actor_system& system_;
  CoordinatorActor coordinator_;
  std::unique_ptr<ConnectionGate> gate_;
  std::vector<caf::actor> actors_;
  std::vector<ParameterServerActor> remote_shards_;
  std::optional<std::string> run_failure_;
};

struct JoinedWorkers {
  std::vector<DataWorkerActor> workers;
  std::vector<std::string> names;
};

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

// Blocks until the coordinator has every worker (and every shard process) or the join timeout passes.
Result<JoinedWorkers> wait_for_workers(caf::actor_system& system, const CoordinatorActor& coordinator,
                                       const ServeSetup& setup, const JoinTally& tally, std::uint32_t remote_shards) {
  Result<JoinedWorkers> joined = Error{"no workers joined"};
  caf::scoped_actor self{system};
  auto on_workers = [&](std::vector<DataWorkerActor>& workers, std::vector<std::string>& names) {
    joined = JoinedWorkers{std::move(workers), std::move(names)};
  };
  auto on_error = [&](caf::error& error) {
    joined = Error{error == caf::sec::request_timeout
                       ? gave_up_waiting(setup, tally, remote_shards)
                       : fmt::format("waiting for {} workers: {}", setup.job.cluster.num_workers, error_text(system, error))};
  };
  // In slices, so that a signal is noticed while nobody has joined (each new wait replaces the last).
  using Clock = std::chrono::steady_clock;
  const auto forever = setup.join_timeout.count() == 0;
  const auto deadline = Clock::now() + setup.join_timeout;
  for (;;) {
    auto slice = std::chrono::milliseconds(200);
    if (!forever)
      slice = std::min(slice, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()));
    bool slice_over = false;
    self->request(coordinator, std::max(slice, std::chrono::milliseconds(1)), wait_atom::value)
        .receive(on_workers, [&](caf::error& error) {
          if (error == caf::sec::request_timeout) slice_over = true;
          else on_error(error);
        });
    // A signal that came while the last workers joined still came before training: nothing is run.
    if (setup.interrupt && setup.interrupt->load() != 0)
      return Error{fmt::format("stopped by a signal while waiting for workers ({} of {} joined); nothing to save yet",
                               tally.workers_joined.load(), setup.job.cluster.num_workers)};
    if (!slice_over) break;
    if (setup.joiners_gone)
      if (auto gone = setup.joiners_gone(); !gone.empty()) return Error{gone};
    if (!forever && Clock::now() >= deadline) return Error{gave_up_waiting(setup, tally, remote_shards)};
  }
  return joined;
}

// Shard 0 in this process; the others as they joined from their own processes, in shard order.
Result<std::vector<ParameterServerActor>> gather_shards(caf::actor_system& system, const CoordinatorActor& coordinator,
                                                        const TrainingJob& job, const ParameterServerState& whole) {
  auto shards = shard_server_state(job, whole, job.cluster.servers);
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
  if (remote->size() != job.cluster.servers - 1 || missing > 0)
    return Error{fmt::format("expected {} shard processes, but {} joined", job.cluster.servers - 1,
                             remote->size() - static_cast<std::size_t>(missing))};
  std::vector<ParameterServerActor> all = {spawn_parameter_server(system, shards.value()[0])};
  all.insert(all.end(), remote->begin(), remote->end());
  return all;
}

// TLS: CAF's OpenSSL module publishes, and the TLS handshake (a certificate signed by the run's CA)
// comes before any byte reaches the middleman. Always with an address: CAF 0.17 listens on every
// interface when given none.
Result<std::uint16_t> publish_tls(caf::actor_system& system, const CoordinatorActor& coordinator,
                                  const ServeSetup& setup) {
  auto port = caf::openssl::publish(coordinator, setup.port, setup.host.c_str(), true);
  if (!port) return Error{listen_failure_text(system, port.error(), setup.host, setup.port)};
  return *port;
}

// Plain mode: psgrad's gate owns the port and hands CAF only connections that answer its challenge.
Result<std::uint16_t> open_gate(caf::actor_system& system, const CoordinatorActor& coordinator,
                                const ServeSetup& setup, const std::shared_ptr<JoinTally>& tally,
                                ServingCleanup& cleanup) {
  auto gate = gate_publishing(system, coordinator, setup.host, setup.port, setup.token, protocol_version,
                              setup.on_event);
  gate.on_refused_worker = [tally] { ++tally->refused; };
  auto opened = ConnectionGate::open(system, std::move(gate));
  if (!opened) return Error{opened.error()};
  const auto port = (*opened)->port();
  cleanup.guarded_by(std::move(opened).value());
  return port;
}

}  // namespace

Result<TrainingSummary> serve_training(caf::actor_system& system, const ServeSetup& setup) {
  const auto& job = setup.job;
  auto state = initial_server_state(job, setup.dev->width, setup.dev->num_classes, setup.resume);
  if (!state) return Error{state.error()};
  const bool shards_elsewhere = setup.remote_shards && job.cluster.servers > 1;
  CoordinatorSetup coordinator_setup{setup.config,
                                     static_cast<std::uint32_t>(job.cluster.num_workers),
                                     setup.token,
                                     state.value()->layout.hash(),
                                     setup.dev->width,
                                     setup.dev->num_classes,
                                     setup.on_event,
                                     job.cluster.elastic,
                                     setup.resume ? setup.resume->workers : std::vector<WorkerStreamState>{},
                                     shards_elsewhere ? static_cast<std::uint32_t>(job.cluster.servers - 1) : 0u};
  coordinator_setup.data = setup.train_data;
  limit_payload_floats(state.value()->layout.total_size());
  // Workers and shard processes on this host pass their payloads through shared memory.
  if (job.cluster.shared_memory) {
    coordinator_setup.host_identity = shared_memory_host_identity();
    accept_shared_memory(true);
  }
  // A resumed run hands shard processes the checkpoint's whole server state; each takes its slice as
  // a shard in this process would.
  if (shards_elsewhere && setup.resume)
    coordinator_setup.resume_server =
        ServerState{Weights{setup.resume->version, setup.resume->layout_hash,
                            FloatBuffer::copy_of(setup.resume->weights.data(), setup.resume->weights.size())},
                    setup.resume->optimizer};
  const auto tally = std::make_shared<JoinTally>();
  coordinator_setup.tally = tally;
  const auto remote_shards = coordinator_setup.remote_shards;
  // In plain mode the gate checks the token before CAF sees a byte, so the coordinator need not.
  if (!setup.tls) coordinator_setup.token.clear();
  ServingCleanup cleanup(system, spawn_coordinator(system, std::move(coordinator_setup)));
  const auto& coordinator = cleanup.coordinator();
  auto port = setup.tls ? publish_tls(system, coordinator, setup) : open_gate(system, coordinator, setup, tally, cleanup);
  if (!port) return Error{port.error()};
  if (setup.on_listening) setup.on_listening(*port);

  auto joined = wait_for_workers(system, coordinator, setup, *tally, remote_shards);
  if (!joined) return Error{joined.error()};
  auto servers = shards_elsewhere ? gather_shards(system, coordinator, job, *state.value())
                                  : spawn_parameter_servers(system, job, std::move(state).value());
  if (!servers) return Error{servers.error()};
  for (const auto& server : *servers) cleanup.stop_on_exit(server);
  if (shards_elsewhere) cleanup.stop_shard_processes_on_exit({servers->begin() + 1, servers->end()});
  auto evaluator = spawn_evaluator(system, job, EvaluatorSetup{setup.dev, std::nullopt, setup.on_report, setup.on_snapshot, setup.trace,
                                                                  setup.on_event});
  if (!evaluator) return Error{evaluator.error()};
  cleanup.stop_on_exit(*evaluator);

  DriverHooks hooks;
  hooks.worker_names = joined->names;
  hooks.on_event = setup.on_event;
  hooks.on_checkpoint = setup.on_checkpoint;
  hooks.checkpoints_on_signal_only = setup.checkpoints_on_signal_only;
  hooks.interrupt = setup.interrupt;
  hooks.trace = setup.trace;
  hooks.stop_early = setup.stop_early;
  if (setup.resume) continue_from(hooks, *setup.resume);
  auto driver = spawn_training_driver(system, job, *servers, joined->workers, *evaluator, std::move(hooks));
  caf::anon_send(coordinator, driver_atom::value, driver);
  auto summary = run_driver(system, driver);  // the driver stops the workers before it answers
  if (!summary) cleanup.run_failed(summary.error());
  return summary;
}

}  // namespace psgrad
