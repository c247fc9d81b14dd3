// Asks the system what CAF would not say (bind and connect probes) and words it for people.
#include "transport/network_words.hpp"

#include <cerrno>
#include <cstring>
#include <memory>

#include <fcntl.h>
#include <fmt/format.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "caf/sec.hpp"
#include "runtime/error_text.hpp"

namespace psgrad {

// The addresses host:port names, or the resolver's complaint.
AddressList resolve_address(const std::string& host, std::uint16_t port, bool passive, std::string& problem) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* found = nullptr;
  const auto service = std::to_string(port);
  const int code = ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
  if (code != 0) problem = fmt::format("cannot resolve host {} ({})", host, ::gai_strerror(code));
  return AddressList(found);
}

namespace {

class Socket {
 public:
  explicit Socket(const addrinfo& address) : fd_(::socket(address.ai_family, address.ai_socktype | SOCK_CLOEXEC, 0)) {}
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  ~Socket() {
    if (fd_ >= 0) ::close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

// 0 when host:port could be bound (so the failure was something else), else errno.
int bind_error(const addrinfo& address) {
  Socket probe(address);
  if (probe.fd() < 0) return errno;
  const int reuse = 1;  // as CAF publishes: a port in TIME_WAIT is free, a listening one is not
  ::setsockopt(probe.fd(), SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof reuse);
  return ::bind(probe.fd(), address.ai_addr, address.ai_addrlen) == 0 ? 0 : errno;
}

// 0 when a connection to the address succeeds within the timeout, ETIMEDOUT when it does not answer,
// else the connection's errno.
int connect_error(const addrinfo& address, int timeout_ms) {
  Socket probe(address);
  if (probe.fd() < 0) return errno;
  ::fcntl(probe.fd(), F_SETFL, ::fcntl(probe.fd(), F_GETFL) | O_NONBLOCK);
  if (::connect(probe.fd(), address.ai_addr, address.ai_addrlen) == 0) return 0;
  if (errno != EINPROGRESS) return errno;
  pollfd waiting{probe.fd(), POLLOUT, 0};
  if (::poll(&waiting, 1, timeout_ms) <= 0) return ETIMEDOUT;
  int error = 0;
  socklen_t size = sizeof error;
  ::getsockopt(probe.fd(), SOL_SOCKET, SO_ERROR, &error, &size);
  return error;
}

std::string first_context_text(const caf::error& error) {
  const auto& context = error.context();
  if (context.size() > 0 && context.match_element<std::string>(0)) return context.get_as<std::string>(0);
  return {};
}

// An errno in words: {where} stands for host:port, {host} for the host, {reason} for strerror's words.
struct ErrnoWords {
  int code;
  const char* words;
};

constexpr ErrnoWords kListenWords[] = {
    {EADDRINUSE, "{where} is already in use (another `psgrad serve`? choose another --port)"},
    {EACCES, "cannot listen on {where}: permission denied (ports below 1024 need root)"},
    {EADDRNOTAVAIL, "cannot listen on {where}: {host} is not an address of this machine (see --bind)"},
};
constexpr const char* kOtherListenWords = "cannot listen on {where}: {reason}";

constexpr ErrnoWords kConnectWords[] = {
    {ECONNREFUSED, "connection refused by {where} (is `psgrad serve` running?)"},
    {ETIMEDOUT, "{where} does not answer (a firewall, or the wrong address?)"},
    {EHOSTUNREACH, "no route to {host} ({reason})"},
    {ENETUNREACH, "no route to {host} ({reason})"},
    {0, "cannot connect to {where}, although it accepts connections now"},
};
constexpr const char* kOtherConnectWords = "cannot connect to {where}: {reason}";

// The table's words for code; null when it has none.
template <std::size_t N>
const char* words_for(const ErrnoWords (&table)[N], int code) {
  for (const auto& entry : table)
    if (entry.code == code) return entry.words;
  return nullptr;
}

template <std::size_t N>
std::string errno_text(const ErrnoWords (&table)[N], const char* otherwise, int code, const std::string& host,
                       std::uint16_t port) {
  const char* words = words_for(table, code);
  return fmt::format(fmt::runtime(words ? words : otherwise), fmt::arg("where", fmt::format("{}:{}", host, port)),
                     fmt::arg("host", host), fmt::arg("reason", std::strerror(code)));
}

}  // namespace

std::string listen_errno_text(int code, const std::string& host, std::uint16_t port) {
  return errno_text(kListenWords, kOtherListenWords, code, host, port);
}

std::string listen_failure_text(caf::actor_system& system, const caf::error& error, const std::string& host,
                                std::uint16_t port) {
  const auto where = fmt::format("{}:{}", host, port);
  std::string problem;
  const auto addresses = resolve_address(host, port, true, problem);
  if (!addresses) return fmt::format("cannot listen on {}: {}", where, problem);
  const int code = bind_error(*addresses);
  if (words_for(kListenWords, code)) return listen_errno_text(code, host, port);
  return fmt::format("cannot listen on {}: {}", where, error_text(system, error));
}

std::string connect_failure_text(caf::actor_system& system, const caf::error& error, const std::string& host,
                                 std::uint16_t port) {
  const auto where = fmt::format("{}:{}", host, port);
  if (error == caf::sec::disconnect_during_handshake)
    return fmt::format("{} hung up during the handshake (it may require TLS, or a certificate signed by "
                       "another CA)",
                       where);
  if (error == caf::sec::no_actor_published_at_port || error == caf::sec::remote_lookup_failed)
    return fmt::format("{} answers, but not as a psgrad server", where);
  if (error != caf::sec::cannot_connect_to_node)
    return fmt::format("cannot connect to {}: {}", where, error_text(system, error));
  std::string problem;
  const auto addresses = resolve_address(host, port, false, problem);
  if (!addresses || first_context_text(error) == "no such host")
    return problem.empty() ? fmt::format("cannot resolve host {}", host) : problem;
  constexpr int probe_timeout_ms = 1000;
  return connect_errno_text(connect_error(*addresses, probe_timeout_ms), host, port);
}

std::string connect_errno_text(int code, const std::string& host, std::uint16_t port) {
  return errno_text(kConnectWords, kOtherConnectWords, code, host, port);
}

}  // namespace psgrad
