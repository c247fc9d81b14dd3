// Plain words for the network failures people meet: a port in use, a refused connection, a name that
// does not resolve. CAF's own rendering (system_error(...)) never reaches a message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include <netdb.h>

#include "caf/actor_system.hpp"
#include "caf/error.hpp"

namespace psgrad {

struct AddressListDeleter {
  void operator()(addrinfo* list) const { ::freeaddrinfo(list); }
};
using AddressList = std::unique_ptr<addrinfo, AddressListDeleter>;

// The stream addresses host:port names (passive: to listen on), or null with the resolver's complaint
// in `problem` ("cannot resolve host NAME (...)").
AddressList resolve_address(const std::string& host, std::uint16_t port, bool passive, std::string& problem);

// Why publishing on host:port failed: "127.0.0.1:47031 is already in use; ...", found by trying to
// bind the address ourselves, since CAF keeps the system's reason to itself.
std::string listen_failure_text(caf::actor_system& system, const caf::error& error, const std::string& host,
                                std::uint16_t port);

// Why connecting to host:port failed: "connection refused by HOST:PORT (is `psgrad serve` running?)",
// found by a short connection attempt of our own when CAF says only that it failed.
std::string connect_failure_text(caf::actor_system& system, const caf::error& error, const std::string& host,
                                 std::uint16_t port);

// The same words for an errno from our own bind or connect (psgrad's gate owns its sockets).
std::string listen_errno_text(int code, const std::string& host, std::uint16_t port);
std::string connect_errno_text(int code, const std::string& host, std::uint16_t port);

}  // namespace psgrad
