// The kernel's view of what a watched socket still has to send, as ordered answers pace by it.
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>

#include "runtime/socket_backlog.hpp"
#include "transport/unique_socket.hpp"

using namespace psgrad;

namespace {

// A connected TCP pair over loopback: what a server writes and what its worker reads.
struct LoopbackPair {
  UniqueSocket sender;
  UniqueSocket receiver;
};

LoopbackPair connect_pair() {
  UniqueSocket listener(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  REQUIRE(listener.get() >= 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  REQUIRE(::bind(listener.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  REQUIRE(::listen(listener.get(), 1) == 0);
  socklen_t size = sizeof address;
  REQUIRE(::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&address), &size) == 0);
  LoopbackPair pair{UniqueSocket(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)), UniqueSocket()};
  // A large send buffer and a small receive buffer: the receiver holds little until it reads, and
  // the rest, far more than a loopback round trip keeps in flight, waits at the sender. Past
  // net.core.wmem_max only with CAP_NET_ADMIN (SO_SNDBUFFORCE); else as large as allowed.
  const int large = 4 * 1024 * 1024;
  if (::setsockopt(pair.sender.get(), SOL_SOCKET, SO_SNDBUFFORCE, &large, sizeof large) != 0)
    REQUIRE(::setsockopt(pair.sender.get(), SOL_SOCKET, SO_SNDBUF, &large, sizeof large) == 0);
  const int small = 16 * 1024;
  REQUIRE(::connect(pair.sender.get(), reinterpret_cast<sockaddr*>(&address), sizeof address) == 0);
  pair.receiver = UniqueSocket(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC));
  REQUIRE(pair.receiver.get() >= 0);
  REQUIRE(::setsockopt(pair.receiver.get(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small) == 0);
  return pair;
}

}  // namespace

TEST_CASE("bytes a watched socket could not send yet count as queued, and none once the peer read them") {
  auto pair = connect_pair();
  const auto before = socket_backlog();
  watch_socket_backlog(pair.sender.get());
  const auto watched = socket_backlog();
  CHECK(watched.sockets == before.sockets + 1);

  // Writes until the kernel takes no more: the receiver does not read yet.
  const std::vector<char> chunk(4096, 'x');
  std::uint64_t sent = 0;
  for (;;) {
    const auto put = ::send(pair.sender.get(), chunk.data(), chunk.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    if (put <= 0) break;
    sent += static_cast<std::uint64_t>(put);
  }
  REQUIRE(sent > 64 * 1024);
  const auto stuck = socket_backlog();
  CHECK(stuck.written >= watched.written + sent);
  CHECK(stuck.queued > before.queued);

  // The receiver reads everything: acknowledged, nothing left queued.
  std::vector<char> into(64 * 1024);
  std::uint64_t read = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (read < sent && std::chrono::steady_clock::now() < deadline) {
    const auto got = ::recv(pair.receiver.get(), into.data(), into.size(), MSG_DONTWAIT);
    if (got > 0)
      read += static_cast<std::uint64_t>(got);
    else
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  REQUIRE(read == sent);
  auto drained = socket_backlog();
  for (int tries = 0; tries < 500 && drained.queued > before.queued; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    drained = socket_backlog();
  }
  CHECK(drained.queued == before.queued);
  CHECK(drained.written == watched.written + sent);
}

TEST_CASE("a watched socket that closed is watched no more") {
  auto pair = connect_pair();
  const auto before = socket_backlog();
  watch_socket_backlog(pair.sender.get());
  CHECK(socket_backlog().sockets == before.sockets + 1);
  pair.sender.reset(-1);
  CHECK(socket_backlog().sockets == before.sockets);
}
