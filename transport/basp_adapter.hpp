// The one place psgrad reaches into CAF 0.17's BASP broker: handing it sockets that psgrad's gate
// accepted or dialled, and closing a published port. A CAF upgrade changes this file.
#pragma once

#include <chrono>
#include <cstdint>
#include <set>
#include <string>

#include "caf/actor.hpp"
#include "caf/actor_system.hpp"
#include "caf/error.hpp"
#include "caf/node_id.hpp"
#include "caf/scoped_actor.hpp"

namespace psgrad {

// What CAF's own doorman does with an accepted socket, minus the accepting: the BASP broker adds it as a
// connection to the actor published on `port` and sends its server handshake. Takes the socket.
void hand_accepted_socket_to_caf(caf::actor_system& system, int fd, std::uint16_t port,
                                 const caf::strong_actor_ptr& published, const std::set<std::string>& interface);

// Makes CAF forget the actor published on `port`.
void close_published_port(caf::actor_system& system, std::uint16_t port);

// What CAF's own connect does once a socket is open: the BASP handshake over `fd` (taken), answered
// with the actor published at the other end and its interface, or the error.
struct PublishedActor {
  caf::strong_actor_ptr actor;
  std::set<std::string> interface;
};
caf::expected<PublishedActor> connect_socket_through_caf(caf::actor_system& system, int fd, std::uint16_t port,
                                                         std::chrono::milliseconds timeout);

}  // namespace psgrad
