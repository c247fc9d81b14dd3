// Dials the server with backoff, says hello, joins, and waits for the server to stop what we serve.
#include "transport/remote_client.hpp"

#include <algorithm>
#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "caf/openssl/all.hpp"
#include "payloads/refused_payload.hpp"
#include "runtime/error_text.hpp"
#include "runtime/steady_time.hpp"
#include "transport/gated_dial.hpp"
#include "transport/network_words.hpp"

namespace psgrad {

namespace {

struct ReachedCoordinator {
  CoordinatorActor actor;  // null when not reached
  std::string text;        // why not
  bool refused = false;    // the server refused us: no point in trying again
};

// One attempt: through CAF's OpenSSL module in TLS mode, else through the server's gate
// (transport/gated_dial.hpp), which keeps the join token off the wire.
ReachedCoordinator reach_coordinator(caf::actor_system& system, const std::string& host, std::uint16_t port,
                                     const std::string& token, const RetryPolicy& retry) {
  ReachedCoordinator reached;
  if (retry.tls) {
    auto coordinator = caf::openssl::remote_actor<CoordinatorActor>(system, host, port);
    if (coordinator)
      reached.actor = *coordinator;
    else
      reached.text = connect_failure_text(system, coordinator.error(), host, port);
    return reached;
  }
  auto dial = dial_through_gate(system, host, port, token, protocol_version,
                                system.message_types<CoordinatorActor>());
  if (dial.published)
    reached.actor = caf::actor_cast<CoordinatorActor>(std::move(*dial.published));
  else
    reached.text = dial.published.error();
  reached.refused = dial.refused;
  return reached;
}

// Connects with backoff and sends the hello that `greet` makes; a hello that times out is retried
// like a failed connection, because CAF 0.17 may hand back its cached proxy of a server process that
// just died (the new one behind the same port never sees the hello).
template <class Greet>
Result<ServerConnection> connect_and_greet(caf::scoped_actor& self, const std::string& host, std::uint16_t port,
                                           const std::string& token, const RetryPolicy& retry,
                                           const std::function<void(const std::string&)>& on_retry, Greet greet) {
  auto& system = self->system();
  const auto started = std::chrono::steady_clock::now();
  auto delay = retry.first_delay;
  std::string reason;
  for (int attempt = 1; attempt <= retry.attempts; ++attempt) {
    auto coordinator = reach_coordinator(system, host, port, token, retry);
    if (coordinator.refused) return Error{coordinator.text};
    if (coordinator.actor) {
      Result<ServerConnection> outcome = Error{"no answer"};
      bool unanswered = false;
      // Over TLS the hello carries the token for the coordinator to check; in plain mode the gate has
      // checked it already and the token never goes on the wire.
      greet(coordinator.actor, retry.tls ? token : std::string())
          .receive([&](JoinOffer& offer) { outcome = ServerConnection{coordinator.actor, std::move(offer)}; },
                   [&](caf::error& error) {
                     unanswered = error == caf::sec::request_timeout;
                     outcome = Error{fmt::format("server {}:{} refused: {}", host, port, error_text(system, error))};
                   });
      if (!unanswered) return outcome;
      reason = fmt::format("{}:{} did not answer the hello", host, port);
    } else {
      reason = coordinator.text;
    }
    if (attempt == retry.attempts) break;
    if (on_retry)
      on_retry(fmt::format("{}; retrying in {} ms (attempt {} of {})", reason, delay.count(), attempt, retry.attempts));
    std::this_thread::sleep_for(delay);
    delay = std::min(delay * 2, retry.max_delay);
  }
  const std::chrono::duration<double> waited = std::chrono::steady_clock::now() - started;
  return Error{fmt::format("{}; giving up after {} attempts ({:.1f} s)", reason, retry.attempts, waited.count())};
}

}  // namespace

Result<ServerConnection> connect_to_server(caf::scoped_actor& self, const std::string& host,
                                           std::uint16_t port, const std::string& token,
                                           const std::string& self_name, const RetryPolicy& retry,
                                           const std::function<void(const std::string&)>& on_retry) {
  return connect_and_greet(self, host, port, token, retry, on_retry,
                           [&](const CoordinatorActor& coordinator, const std::string& hello_token) {
    return self->request(coordinator, std::chrono::seconds(5), hello_atom::value, protocol_version, hello_token,
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
  return connect_and_greet(self, host, port, token, retry, on_retry,
                           [&](const CoordinatorActor& coordinator, const std::string& hello_token) {
    return self->request(coordinator, std::chrono::seconds(5), shard_hello_atom::value, protocol_version,
                         hello_token, shard);
  });
}

Result<ServerConnection> connect_as_table_shard(caf::scoped_actor& self, const std::string& host, std::uint16_t port,
                                                const std::string& token, std::uint32_t index,
                                                const RetryPolicy& retry,
                                                const std::function<void(const std::string&)>& on_retry) {
  return connect_and_greet(self, host, port, token, retry, on_retry,
                           [&](const CoordinatorActor& coordinator, const std::string& hello_token) {
    return self->request(coordinator, std::chrono::seconds(5), table_hello_atom::value, protocol_version,
                         hello_token, index);
  });
}

Status join_as_shard(caf::scoped_actor& self, const CoordinatorActor& coordinator, std::uint32_t shard,
                     const ParameterServerActor& server, std::uint64_t layout_hash, const std::string& host,
                     std::uint16_t port, const std::string& host_identity) {
  auto& system = self->system();
  Status outcome = Error{"no answer"};
  self->request(coordinator, std::chrono::seconds(10), join_shard_atom::value, shard, server, layout_hash, host, port,
                host_identity)
      .receive([&](std::uint32_t) { outcome = success(); },
               [&](caf::error& error) { outcome = Error{"server refused this shard: " + error_text(system, error)}; });
  return outcome;
}

Result<RunEnding> serve_until_stopped(caf::scoped_actor& self, const CoordinatorActor& coordinator,
                                      const caf::actor_addr& served, std::chrono::milliseconds linger,
                                      const std::optional<ServerWaitSetup>& wait) {
  self->monitor(coordinator);
  self->monitor(caf::actor_cast<caf::actor>(served));
  Result<RunEnding> outcome = RunEnding{};
  bool done = false;
  bool server_gone = false;
  auto on_down = [&](const caf::down_msg& down) {
    if (down.source == served) {
      // The server ends a failed run's workers with the failure as their exit reason.
      if (down.reason == caf::sec::runtime_error)
        outcome = RunEnding{RunEnding::Outcome::failed_on_server, error_text(self->system(), down.reason)};
      else if (is_refused_payload(down.reason))
        outcome = RunEnding{RunEnding::Outcome::dropped, error_text(self->system(), down.reason)};
      else if (server_gone && down.reason == caf::exit_reason::user_shutdown)
        outcome = Error{"lost the connection to the server before training finished"};
      done = true;
    } else if (down.source == coordinator.address() && !server_gone) {
      // A server that ends as soon as it has the answer to its stop can be seen gone before the served
      // actor, which quit on that stop, is: ended here, the served actor's own reason tells which.
      server_gone = true;
      caf::anon_send_exit(caf::actor_cast<caf::actor>(served), caf::exit_reason::user_shutdown);
    }
  };
  if (!wait) {
    while (!done) self->receive(on_down);
  } else {
    ServerWait server(wait->limit, steady_now_ns());
    while (!done) {
      const auto now = steady_now_ns();
      if (wait->silence) wait->silence->set(server.silent(now));
      if (server.given_up(now)) {
        caf::anon_send_exit(caf::actor_cast<caf::actor>(served), caf::exit_reason::user_shutdown);
        // Nothing to linger for: the server takes no answer.
        return RunEnding{RunEnding::Outcome::server_silent,
                         fmt::format("the server at {} sent nothing for {:g} s (cluster.server_wait_ms); giving up",
                                     wait->server, static_cast<double>(wait->limit.count()) / 1000.0)};
      }
      if (server.ask_now(now)) {
        self->send(coordinator, ping_atom::value);
        server.asked(now);
      }
      self->receive(on_down, [&](pong_atom) { server.answered(steady_now_ns()); },
                    caf::after(server.interval()) >> [] {});
    }
  }
  if (!outcome || linger.count() <= 0 || server_gone) return outcome;
  // The server goes away once it has our answer; if it stays, the answer has had `linger` to leave.
  const auto deadline = std::chrono::steady_clock::now() + linger;
  for (bool gone = false; !gone && std::chrono::steady_clock::now() < deadline;)
    self->receive([&](const caf::down_msg& down) { gone = down.source == coordinator.address(); },
                  caf::after(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now())) >>
                      [&] { gone = true; });
  return outcome;
}

}  // namespace psgrad
