#include "actors/remote_training.hpp"

#include <thread>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "caf/openssl/all.hpp"
#include "actors/coordinator.hpp"
#include "actors/error_text.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "actors/training_driver.hpp"

namespace psgrad {

namespace {

std::vector<caf::actor> as_actors(const std::vector<ParameterServerActor>& servers) {
  std::vector<caf::actor> actors;
  for (const auto& server : servers) actors.push_back(caf::actor_cast<caf::actor>(server));
  return actors;
}

// CAF 0.17.6's openssl::unpublish does not compile (it uses a 0.18 atom); a TLS port closes when
// the actor system shuts down instead.
void unpublish(caf::actor_system& system, const CoordinatorActor& coordinator, std::uint16_t port, bool tls) {
  if (!tls) system.middleman().unpublish(coordinator, port);
}

}  // namespace

Result<TrainingSummary> serve_training(caf::actor_system& system, const ServeSetup& setup) {
  const auto& job = setup.job;
  auto state = initial_server_state(job, setup.dev->width, setup.dev->num_classes, setup.resume);
  if (!state) return Error{state.error()};
  CoordinatorSetup coordinator_setup{setup.config,
                                     static_cast<std::uint32_t>(job.num_workers),
                                     setup.token,
                                     state.value()->layout.hash(),
                                     setup.dev->width,
                                     setup.dev->num_classes,
                                     setup.on_event,
                                     job.elastic,
                                     setup.resume ? setup.resume->workers : std::vector<WorkerStreamState>{},
                                     setup.remote_shards && job.servers > 1
                                         ? static_cast<std::uint32_t>(job.servers - 1) : 0u};
  auto coordinator = spawn_coordinator(system, std::move(coordinator_setup));
  auto shutdown = [&](const std::vector<caf::actor>& others) {
    for (const auto& other : others) caf::anon_send_exit(other, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(coordinator, caf::exit_reason::user_shutdown);
  };
  // Always with an address: CAF 0.17 listens on every interface when given none.
  auto port = setup.tls ? caf::openssl::publish(coordinator, setup.port, setup.host.c_str(), true)
                        : system.middleman().publish(coordinator, setup.port, setup.host.c_str(), true);
  if (!port) {
    shutdown({});
    return Error{fmt::format("cannot listen on {}:{}: {}", setup.host, setup.port,
                             error_text(system, port.error()))};
  }
  if (setup.on_listening) setup.on_listening(*port);

  std::vector<DataWorkerActor> workers;
  std::vector<std::string> names;
  Result<TrainingSummary> summary = Error{"no workers joined"};
  {
    caf::scoped_actor self{system};
    bool ready = false;
    self->request(coordinator, setup.join_timeout, wait_atom::value)
        .receive([&](std::vector<DataWorkerActor>& joined, std::vector<std::string>& hosts) {
                   workers = std::move(joined);
                   names = std::move(hosts);
                   ready = true;
                 },
                 [&](caf::error& error) {
                   summary = Error{fmt::format("waiting for {} workers: {}", job.num_workers,
                                               error == caf::sec::request_timeout
                                                   ? "timed out"
                                                   : error_text(system, error))};
                 });
    if (!ready) {
      unpublish(system, coordinator, *port, setup.tls);
      shutdown({});
      return summary;
    }
  }
  std::vector<ParameterServerActor> remote_shards;
  Result<std::vector<ParameterServerActor>> servers = Error{"no servers"};
  if (setup.remote_shards && job.servers > 1) {
    // Shard 0 here; the others joined from their own processes, in shard order.
    auto shards = shard_server_state(job, *state.value(), job.servers);
    if (!shards) {
      shutdown({});
      return Error{shards.error()};
    }
    caf::scoped_actor self{system};
    self->request(coordinator, std::chrono::seconds(10), shards_atom::value)
        .receive([&](std::vector<ParameterServerActor>& joined) { remote_shards = std::move(joined); },
                 [&](caf::error&) {});
    std::vector<ParameterServerActor> all = {spawn_parameter_server(system, shards.value()[0])};
    all.insert(all.end(), remote_shards.begin(), remote_shards.end());
    servers = std::move(all);
  } else {
    servers = spawn_parameter_servers(system, job, std::move(state).value());
  }
  if (!servers) {
    shutdown({});
    return Error{servers.error()};
  }
  auto evaluator = spawn_evaluator(system, job, setup.dev, setup.on_report);
  if (!evaluator) {
    shutdown(as_actors(*servers));
    return Error{evaluator.error()};
  }
  DriverHooks hooks;
  hooks.worker_names = names;
  hooks.on_event = setup.on_event;
  hooks.on_checkpoint = setup.on_checkpoint;
  if (setup.resume) hooks.start_iteration = setup.resume->iteration;
  auto driver = spawn_training_driver(system, job, *servers, workers, evaluator.value(), std::move(hooks));
  caf::anon_send(coordinator, driver_atom::value, driver);
  summary = run_driver(system, driver);  // the driver stops the workers before it answers
  {
    // Acknowledged, so the shard processes exit cleanly before this one goes away.
    caf::scoped_actor self{system};
    for (const auto& shard : remote_shards)
      self->request(shard, std::chrono::seconds(5), stop_atom::value).receive([](bool) {}, [](caf::error&) {});
  }
  unpublish(system, coordinator, *port, setup.tls);
  auto others = as_actors(*servers);
  others.push_back(caf::actor_cast<caf::actor>(evaluator.value()));
  shutdown(others);
  return summary;
}

namespace {

// Connects with backoff and sends the hello that `greet` makes; a hello that times out is retried
// like a failed connection, because CAF 0.17 may hand back its cached proxy of a server process that
// just died (the new one behind the same port never sees the hello).
template <class Greet>
Result<ServerConnection> connect_and_greet(caf::scoped_actor& self, const std::string& host, std::uint16_t port,
                                           const RetryPolicy& retry,
                                           const std::function<void(const std::string&)>& on_retry, Greet greet) {
  auto& system = self->system();
  auto delay = retry.first_delay;
  std::string last_error;
  for (int attempt = 1; attempt <= retry.attempts; ++attempt) {
    auto coordinator = retry.tls ? caf::openssl::remote_actor<CoordinatorActor>(system, host, port)
                                 : system.middleman().remote_actor<CoordinatorActor>(host, port);
    std::string retry_reason;
    if (coordinator) {
      Result<ServerConnection> outcome = Error{"no answer"};
      bool unanswered = false;
      greet(*coordinator)
          .receive([&](JoinOffer& offer) { outcome = ServerConnection{*coordinator, std::move(offer)}; },
                   [&](caf::error& error) {
                     unanswered = error == caf::sec::request_timeout;
                     outcome = Error{fmt::format("server {}:{} refused: {}", host, port, error_text(system, error))};
                   });
      if (!unanswered) return outcome;
      last_error = "the server did not answer the hello";
      retry_reason = fmt::format("{}:{} did not answer", host, port);
    } else {
      last_error = coordinator.error() == caf::sec::disconnect_during_handshake
                       ? "the server hung up during the handshake (it may require TLS, or a certificate "
                         "signed by another CA)"
                       : error_text(system, coordinator.error());
      retry_reason = fmt::format("cannot reach {}:{} ({})", host, port, last_error);
    }
    if (attempt == retry.attempts) break;
    if (on_retry) on_retry(fmt::format("{}; retrying in {} ms", retry_reason, delay.count()));
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, retry.max_delay);
  }
  return Error{fmt::format("cannot reach server {}:{} after {} attempts: {}", host, port, retry.attempts,
                           last_error)};
}

}  // namespace

Result<ServerConnection> connect_to_server(caf::scoped_actor& self, const std::string& host,
                                           std::uint16_t port, const std::string& token,
                                           const std::string& self_name, const RetryPolicy& retry,
                                           const std::function<void(const std::string&)>& on_retry) {
  return connect_and_greet(self, host, port, retry, on_retry, [&](const CoordinatorActor& coordinator) {
    return self->request(coordinator, std::chrono::seconds(5), hello_atom::value, protocol_version, token,
                         self_name);
  });
}

Result<std::uint32_t> join_server(caf::scoped_actor& self, const CoordinatorActor& coordinator,
                                  const JoinRequest& request) {
  auto& system = self->system();
  Result<std::uint32_t> outcome = Error{"no answer"};
  self->request(coordinator, std::chrono::seconds(10), join_atom::value, request)
      .receive([&](std::uint32_t joined) { outcome = joined; },
               [&](caf::error& error) { outcome = Error{"server refused this worker: " + error_text(system, error)}; });
  return outcome;
}

Result<ServerConnection> connect_as_shard(caf::scoped_actor& self, const std::string& host, std::uint16_t port,
                                          const std::string& token, std::uint32_t shard, const RetryPolicy& retry,
                                          const std::function<void(const std::string&)>& on_retry) {
  return connect_and_greet(self, host, port, retry, on_retry, [&](const CoordinatorActor& coordinator) {
    return self->request(coordinator, std::chrono::seconds(5), shard_hello_atom::value, protocol_version, token,
                         shard);
  });
}

Status join_as_shard(caf::scoped_actor& self, const CoordinatorActor& coordinator, std::uint32_t shard,
                     const ParameterServerActor& server, std::uint64_t layout_hash) {
  auto& system = self->system();
  Status outcome = Error{"no answer"};
  self->request(coordinator, std::chrono::seconds(10), join_shard_atom::value, shard, server, layout_hash)
      .receive([&](std::uint32_t) { outcome = success(); },
               [&](caf::error& error) { outcome = Error{"server refused this shard: " + error_text(system, error)}; });
  return outcome;
}

Status serve_until_stopped(caf::scoped_actor& self, const CoordinatorActor& coordinator,
                           const DataWorkerActor& worker) {
  return serve_until_stopped(self, coordinator, worker.address());
}

Status serve_until_stopped(caf::scoped_actor& self, const CoordinatorActor& coordinator,
                           const caf::actor_addr& served) {
  self->monitor(coordinator);
  self->monitor(caf::actor_cast<caf::actor>(served));
  Status outcome = success();
  bool done = false;
  while (!done) {
    self->receive([&](const caf::down_msg& down) {
      if (down.source == served) {
        done = true;
      } else if (down.source == coordinator.address()) {
        outcome = Error{"lost the connection to the server before training finished"};
        caf::anon_send_exit(caf::actor_cast<caf::actor>(served), caf::exit_reason::user_shutdown);
        done = true;
      }
    });
  }
  return outcome;
}

}  // namespace psgrad
