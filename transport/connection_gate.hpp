// psgrad's gate in front of CAF's middleman for a plain-mode server: it owns the listening port,
// admits only connections that answer the join-token challenge, and hands them to CAF's BASP broker.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "caf/actor.hpp"
#include "caf/actor_cast.hpp"
#include "caf/actor_system.hpp"
#include "caf/intrusive_ptr.hpp"
#include "transport/unique_socket.hpp"
#include "model/result.hpp"

namespace psgrad {

// What one gate holds back: connections that have not answered yet are bounded in number and time,
// and each holds a fixed 76-byte buffer, so no peer can make the server allocate more than that.
struct GateLimits {
  std::size_t max_waiting = 256;                  // unanswered connections; a newcomer evicts the oldest
  std::chrono::milliseconds answer_within{5000};  // from accept to a complete answer
};

struct GateSetup {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;  // 0: the system picks a free one
  std::string token;       // may be empty: then the gate still keeps out anything that is not psgrad
  std::uint32_t protocol = 0;
  caf::strong_actor_ptr published;    // the actor an admitted connection's CAF handshake announces
  std::set<std::string> interface;    // its message types, as CAF's publish would announce them
  GateLimits limits;
  std::function<void(const std::string&)> on_event;  // refusals, at most a few lines per 10 s
  std::function<void()> on_refused_worker;           // a psgrad peer refused (wrong token or version)
};

// A gate publishing `actor`, announced with its handle type's messages as CAF's publish would.
template <class Handle>
GateSetup gate_publishing(caf::actor_system& system, const Handle& actor, std::string host, std::uint16_t port,
                          std::string token, std::uint32_t protocol,
                          std::function<void(const std::string&)> on_event) {
  GateSetup gate;
  gate.host = std::move(host);
  gate.port = port;
  gate.token = std::move(token);
  gate.protocol = protocol;
  gate.published = caf::actor_cast<caf::strong_actor_ptr>(actor);
  gate.interface = system.message_types<Handle>();
  gate.on_event = std::move(on_event);
  return gate;
}

// How many connections the gate admitted and refused so far.
struct GateCounts {
  std::uint64_t admitted = 0;
  std::uint64_t refused = 0;
};

class ConnectionGate {
 public:
  // Binds host:port and starts admitting on its own thread; a failure in plain words
  // ("127.0.0.1:4242 is already in use ...").
  static Result<std::unique_ptr<ConnectionGate>> open(caf::actor_system& system, GateSetup setup);

  ConnectionGate(const ConnectionGate&) = delete;
  ConnectionGate& operator=(const ConnectionGate&) = delete;
  // Stops admitting: closes the port and every unanswered connection (admitted ones live on in CAF).
  ~ConnectionGate();

  std::uint16_t port() const { return port_; }
  GateCounts counts() const { return {admitted_.load(), refused_.load()}; }

 private:
  ConnectionGate(caf::actor_system& system, GateSetup setup, UniqueSocket listener, std::uint16_t port);
  void run();
  void hand_to_caf(UniqueSocket socket);

  caf::actor_system& system_;
  GateSetup setup_;
  UniqueSocket listener_;
  UniqueSocket wake_;  // an eventfd: written once to stop the thread
  std::uint16_t port_;
  std::atomic<std::uint64_t> admitted_{0};
  std::atomic<std::uint64_t> refused_{0};
  std::thread thread_;

  friend class GateLoop;
};

}  // namespace psgrad
