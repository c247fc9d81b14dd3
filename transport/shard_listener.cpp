// Opens a shard process's port for workers, and dials every shard from a worker process.
#include "transport/shard_listener.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <functional>
#include <thread>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <sys/socket.h>

#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "caf/openssl/all.hpp"
#include "runtime/error_text.hpp"
#include "transport/gated_dial.hpp"
#include "transport/network_words.hpp"
#include "transport/unique_socket.hpp"

namespace psgrad {

Result<ShardListener> ShardListener::open(caf::actor_system& system, const ParameterServerActor& server,
                                          ShardListenSetup setup) {
  ShardListener listener;
  listener.host_ = setup.advertised.empty() ? setup.host : setup.advertised;
  if (setup.tls) {
    auto port = caf::openssl::publish(server, setup.port, setup.host.c_str(), true);
    if (!port) return Error{listen_failure_text(system, port.error(), setup.host, setup.port)};
    listener.port_ = *port;
    return listener;
  }
  auto opened = ConnectionGate::open(
      system, gate_publishing(system, server, setup.host, setup.port, setup.token, protocol_version, setup.on_event));
  if (!opened) return Error{opened.error()};
  listener.port_ = (*opened)->port();
  listener.gate_ = std::move(opened).value();
  return listener;
}

Result<std::string> local_address_toward(const std::string& host, std::uint16_t port) {
  std::string problem;
  const auto addresses = resolve_address(host, port, false, problem);
  if (!addresses) return Error{problem};
  // A UDP "connect" sends nothing; it only asks the kernel which route, and so which source address,
  // a packet to host:port would take.
  for (const addrinfo* address = addresses.get(); address != nullptr; address = address->ai_next) {
    UniqueSocket probe(::socket(address->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!probe || ::connect(probe.get(), address->ai_addr, address->ai_addrlen) != 0) continue;
    sockaddr_storage local{};
    socklen_t size = sizeof local;
    if (::getsockname(probe.get(), reinterpret_cast<sockaddr*>(&local), &size) != 0) continue;
    char text[NI_MAXHOST] = {};
    if (::getnameinfo(reinterpret_cast<sockaddr*>(&local), size, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0)
      return std::string(text);
  }
  return Error{fmt::format("no route from this machine to {}:{} to find the address workers should dial; "
                           "give --listen HOST:PORT",
                           host, port)};
}

namespace {

constexpr const char* unreachable_hint = "give that shard `--listen HOST[:PORT]` at an address workers can reach";

// Every shard's address, once all shard processes have joined (asked again every 100 ms until then).
Result<std::vector<ShardAddress>> wait_for_shard_addresses(caf::actor_system& system,
                                                           const CoordinatorActor& coordinator) {
  caf::scoped_actor self{system};
  for (;;) {
    Result<std::vector<ShardAddress>> outcome = Error{"no answer"};
    bool complete = false;
    self->request(coordinator, std::chrono::seconds(10), shard_addresses_atom::value)
        .receive(
            [&](std::uint32_t expected, std::vector<ShardAddress>& joined) {
              complete = joined.size() >= expected;
              outcome = std::move(joined);
            },
            [&](caf::error& error) {
              // Every worker asks, shards or not: an error here means the server stopped answering.
              outcome = Error{"the server stopped before training began (" + error_text(system, error) + ")"};
            });
    if (!outcome || complete) return outcome;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// One attempt at one shard: the actor its port publishes, or why not (and whether trying again can help).
struct ShardDial {
  Result<caf::actor_addr> reached = Error{"not dialled"};
  bool refused = false;
};

ShardDial dial_shard(caf::actor_system& system, const ShardAddress& address, const std::string& token, bool tls) {
  ShardDial dial;
  if (tls) {
    auto server = caf::openssl::remote_actor<ParameterServerActor>(system, address.host, address.port);
    if (server) dial.reached = server->address();
    else dial.reached = Error{connect_failure_text(system, server.error(), address.host, address.port)};
    return dial;
  }
  auto gated = dial_through_gate(system, address.host, address.port, token, protocol_version,
                                 system.message_types<ParameterServerActor>());
  dial.refused = gated.refused;
  if (gated.published) dial.reached = caf::actor_cast<caf::actor_addr>(*gated.published);
  else dial.reached = Error{gated.published.error()};
  return dial;
}

}  // namespace

Result<DialledShards> dial_shards(caf::actor_system& system, const CoordinatorActor& coordinator,
                                  const std::string& token, bool tls,
                                  const std::function<void(const std::string&)>& on_retry) {
  auto addresses = wait_for_shard_addresses(system, coordinator);
  if (!addresses) return Error{addresses.error()};
  std::sort(addresses->begin(), addresses->end(), [](const auto& a, const auto& b) { return a.shard < b.shard; });
  std::vector<std::string> lines;
  for (const auto& address : *addresses) {
    const auto where = fmt::format("shard {} at {}:{}", address.shard, address.host, address.port);
    // A shard that just opened its port on a busy machine may answer late: a few tries with backoff.
    constexpr int attempts = 5;
    auto delay = std::chrono::milliseconds(100);
    ShardDial dial;
    for (int attempt = 1; attempt <= attempts; ++attempt) {
      dial = dial_shard(system, address, token, tls);
      if (dial.reached || dial.refused || attempt == attempts) break;
      if (on_retry)
        on_retry(fmt::format("cannot reach {} yet ({}); retrying in {} ms (attempt {} of {})", where,
                             dial.reached.error(), delay.count(), attempt, attempts));
      std::this_thread::sleep_for(delay);
      delay *= 2;
    }
    if (!dial.reached)
      return Error{fmt::format("cannot reach {}: {}{}; {}", where, dial.reached.error(),
                               dial.refused ? "" : fmt::format(" (after {} attempts)", attempts), unreachable_hint)};
    // CAF routes a node's messages over a direct connection once it has one, so the handle the
    // server hands out later takes this path; the check makes sure it is that shard.
    if (*dial.reached != address.server.address())
      return Error{fmt::format("{} is another process than the shard that joined the server", where)};
    lines.push_back(fmt::format("reached {} directly", where));
  }
  return DialledShards{std::move(lines), std::move(*addresses)};
}

}  // namespace psgrad
