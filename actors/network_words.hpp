// Plain words for the network failures people meet: a port in use, a refused connection, a name that
// does not resolve. CAF's own rendering (system_error(...)) never reaches a message.
#pragma once

#include <cstdint>
#include <string>

#include "caf/actor_system.hpp"
#include "caf/error.hpp"

namespace psgrad {

// Why publishing on host:port failed: "127.0.0.1:47031 is already in use; ...", found by trying to
// bind the address ourselves, since CAF keeps the system's reason to itself.
std::string listen_failure_text(caf::actor_system& system, const caf::error& error, const std::string& host,
                                std::uint16_t port);

// Why connecting to host:port failed: "connection refused by HOST:PORT (is `psgrad serve` running?)",
// found by a short connection attempt of our own when CAF says only that it failed.
std::string connect_failure_text(caf::actor_system& system, const caf::error& error, const std::string& host,
                                 std::uint16_t port);

}  // namespace psgrad
