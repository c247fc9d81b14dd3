// The joining side of psgrad's gate: connect to a plain-mode server, answer its challenge with the
// join token, check the server's proof, then hand the socket to CAF to reach the published actor.
#pragma once

#include <chrono>
#include <cstdint>
#include <set>
#include <string>

#include "caf/actor_system.hpp"
#include "caf/fwd.hpp"
#include "model/result.hpp"

namespace psgrad {

struct GatedDial {
  Result<caf::strong_actor_ptr> published = Error{"not dialled"};  // the server's published actor
  // The server said no (wrong token, other version) or took the connection and never greeted (TLS
  // mode): dialling again will not help.
  bool refused = false;
};

// `interface`: the message types the published actor must accept (system.message_types<Handle>()).
// Every failure is one line naming host:port: a refused or unanswered connection, a peer that is not a
// psgrad server in plain mode, a wrong token.
GatedDial dial_through_gate(caf::actor_system& system, const std::string& host, std::uint16_t port,
                            const std::string& token, std::uint32_t protocol,
                            const std::set<std::string>& interface,
                            std::chrono::milliseconds timeout = std::chrono::seconds(5));

}  // namespace psgrad
