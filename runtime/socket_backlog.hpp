// What this process's admitted TCP connections still have to put on the wire: lets a sync server send
// its next ordered answer as the one before leaves, instead of a round trip later.
#pragma once

#include <cstddef>
#include <cstdint>

namespace psgrad {

struct SocketBacklog {
  std::uint64_t written = 0;     // bytes ever handed to the kernel on the watched sockets
  std::uint64_t queued = 0;      // of those, not acknowledged and more than a round trip keeps in flight
  double bytes_per_second = 0;   // the fastest delivery rate the kernel measured on one (0: none yet)
  std::size_t sockets = 0;       // watched sockets still open
};

// Adds a connected TCP socket (its number stays valid while CAF holds it). One that closes, or whose
// number is reused for another, is dropped at the next look.
void watch_socket_backlog(int fd);

// The sums over the watched sockets, from the kernel (SIOCOUTQ, TCP_INFO): a few system calls each.
SocketBacklog socket_backlog();

}  // namespace psgrad
