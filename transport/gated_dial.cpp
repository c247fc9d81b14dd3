// Dials with a deadline on every step, so a silent or hostile server costs a worker at most the
// timeout and a few fixed-size buffers, never an allocation it declares.
#include "transport/gated_dial.hpp"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include "caf/all.hpp"
#include "transport/basp_adapter.hpp"
#include "runtime/error_text.hpp"
#include "transport/gate_handshake.hpp"
#include "transport/network_words.hpp"
#include "transport/unique_socket.hpp"

namespace psgrad {

namespace {

using Clock = std::chrono::steady_clock;

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return left > 0 ? static_cast<int>(left) : 0;
}

// 0, or the errno of a non-blocking connect that did not complete by the deadline (ETIMEDOUT).
int connect_by(int fd, const addrinfo& address, Clock::time_point deadline) {
  if (::connect(fd, address.ai_addr, address.ai_addrlen) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  pollfd waiting{fd, POLLOUT, 0};
  if (::poll(&waiting, 1, remaining_ms(deadline)) <= 0) return ETIMEDOUT;
  int error = 0;
  socklen_t size = sizeof error;
  ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
  return error;
}

// The first address of host:port that accepts a connection, or the last failure in words.
Result<UniqueSocket> open_connection(const std::string& host, std::uint16_t port, Clock::time_point deadline) {
  std::string problem;
  const auto addresses = resolve_address(host, port, false, problem);
  if (!addresses) return Error{problem};
  int code = 0;
  for (const addrinfo* address = addresses.get(); address != nullptr; address = address->ai_next) {
    UniqueSocket socket(::socket(address->ai_family, address->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (!socket) {
      code = errno;
      continue;
    }
    code = connect_by(socket.get(), *address, deadline);
    if (code == 0) return socket;
  }
  return Error{connect_errno_text(code, host, port)};
}

enum class Transfer { done, hung_up, timed_out, failed };

Transfer receive_exactly(int fd, std::uint8_t* out, std::size_t size, Clock::time_point deadline) {
  std::size_t have = 0;
  while (have < size) {
    pollfd waiting{fd, POLLIN, 0};
    if (::poll(&waiting, 1, remaining_ms(deadline)) <= 0) return Transfer::timed_out;
    const auto got = ::recv(fd, out + have, size - have, MSG_DONTWAIT);
    if (got == 0) return Transfer::hung_up;
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      return Transfer::failed;
    }
    have += static_cast<std::size_t>(got);
  }
  return Transfer::done;
}

Transfer send_all(int fd, const std::uint8_t* data, std::size_t size, Clock::time_point deadline) {
  std::size_t sent = 0;
  while (sent < size) {
    pollfd waiting{fd, POLLOUT, 0};
    if (::poll(&waiting, 1, remaining_ms(deadline)) <= 0) return Transfer::timed_out;
    const auto put = ::send(fd, data + sent, size - sent, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (put < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) continue;
      return Transfer::failed;
    }
    sent += static_cast<std::size_t>(put);
  }
  return Transfer::done;
}

// The gate's exchange on a connected socket: success, or why not (and whether the server refused us).
GatedDial pass_gate(int fd, const std::string& where, const std::string& token, std::uint32_t protocol,
                    std::chrono::milliseconds timeout, Clock::time_point deadline) {
  GatedDial dial;
  gate::Challenge challenge{};
  switch (receive_exactly(fd, challenge.data(), challenge.size(), deadline)) {
    case Transfer::done: break;
    case Transfer::timed_out:
      dial.published = Error{fmt::format("{} sent no psgrad greeting within {:g} s (a psgrad server in TLS mode? "
                                         "then give --tls-cert, --tls-key and --tls-ca)",
                                         where, timeout.count() / 1000.0)};
      // A peer that took the connection and stays silent (a TLS server waits for the client to speak
      // first) would only do so again: dialling again repeats the wait.
      dial.refused = true;
      return dial;
    default:
      dial.published = Error{fmt::format("{} hung up before greeting (not a psgrad server?)", where)};
      return dial;
  }
  if (auto server_protocol = gate::read_challenge(challenge); !server_protocol) {
    dial.published = Error{fmt::format("{}: {}", where, server_protocol.error())};
    return dial;
  }
  const auto answer = gate::make_answer(challenge, protocol, token);
  gate::Verdict verdict{};
  if (send_all(fd, answer.data(), answer.size(), deadline) != Transfer::done ||
      receive_exactly(fd, verdict.data(), verdict.size(), deadline) != Transfer::done) {
    dial.published = Error{fmt::format("{} hung up before admitting us", where)};
    return dial;
  }
  if (auto admitted = gate::read_verdict(verdict, answer, protocol, token); !admitted) {
    dial.published = Error{fmt::format("server {} refused: {}", where, admitted.error())};
    dial.refused = true;
    return dial;
  }
  dial.published = caf::strong_actor_ptr{};  // passed; the actor itself comes from CAF's handshake
  return dial;
}

}  // namespace

GatedDial dial_through_gate(caf::actor_system& system, const std::string& host, std::uint16_t port,
                            const std::string& token, std::uint32_t protocol,
                            const std::set<std::string>& interface, std::chrono::milliseconds timeout) {
  const auto where = fmt::format("{}:{}", host, port);
  const auto deadline = Clock::now() + timeout;
  GatedDial dial;
  auto socket = open_connection(host, port, deadline);
  if (!socket) {
    dial.published = Error{socket.error()};
    return dial;
  }
  dial = pass_gate(socket->get(), where, token, protocol, timeout, deadline);
  if (!dial.published) return dial;
  // Admitted: from here on the connection is CAF's, exactly as if its own connect had made it.
  auto reached = connect_socket_through_caf(system, socket->release(), port, timeout);
  if (!reached)
    dial.published = Error{fmt::format("{}: CAF's handshake failed: {}", where, error_text(system, reached.error()))};
  else if (!reached->actor)
    dial.published = Error{fmt::format("{} answers, but not as a psgrad server", where)};
  else if (!system.assignable(reached->interface, interface))
    dial.published = Error{fmt::format("{} serves something other than a psgrad run (another psgrad version?)", where)};
  else
    dial.published = std::move(reached->actor);
  return dial;
}

}  // namespace psgrad
