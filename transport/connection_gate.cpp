// The gate's thread: accept, challenge, read at most one answer's bytes per connection, judge, then
// hand the socket to CAF or close it. One poll loop; nothing here grows with what a peer sends.
#include "transport/connection_gate.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <vector>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include "caf/all.hpp"
#include "transport/basp_adapter.hpp"
#include "transport/gate_handshake.hpp"
#include "transport/network_words.hpp"
#include "runtime/socket_backlog.hpp"

namespace psgrad {

namespace {

using Clock = std::chrono::steady_clock;

std::string peer_name(const sockaddr_storage& address) {
  char host[NI_MAXHOST] = {};
  char service[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), sizeof address, host, sizeof host, service,
                    sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "an unknown peer";
  return address.ss_family == AF_INET6 ? fmt::format("[{}]:{}", host, service) : fmt::format("{}:{}", host, service);
}

// Refusals are worth a line each, but a flood of them must not flood the log: at most three lines
// per ten seconds, then one line with how many more there were.
class RefusalLog {
 public:
  RefusalLog(std::function<void(const std::string&)> print, std::string what)
      : print_(std::move(print)), what_(std::move(what)) {}
  ~RefusalLog() { flush(); }

  void add(const std::string& line, Clock::time_point now) {
    roll(now);
    if (shown_ < lines_per_window) {
      ++shown_;
      if (print_) print_(line);
    } else {
      ++hidden_;
    }
  }

  void roll(Clock::time_point now) {
    if (now - window_start_ < window) return;
    flush();
    window_start_ = now;
    shown_ = 0;
  }

  Clock::time_point next_roll() const { return window_start_ + window; }

 private:
  static constexpr int lines_per_window = 3;
  static constexpr auto window = std::chrono::seconds(10);

  void flush() {
    if (hidden_ > 0 && print_)
      print_(fmt::format("refused {} more {} at the gate in the last {} s (not shown one by one)", hidden_, what_,
                         std::chrono::duration_cast<std::chrono::seconds>(window).count()));
    hidden_ = 0;
  }

  std::function<void(const std::string&)> print_;
  std::string what_;
  Clock::time_point window_start_ = Clock::now();
  int shown_ = 0;
  std::uint64_t hidden_ = 0;
};

// A connection that has been challenged and has not answered in full yet.
struct Waiting {
  UniqueSocket socket;
  std::string peer;
  Clock::time_point deadline;
  gate::Challenge challenge;
  gate::Answer answer{};
  std::size_t received = 0;
  bool finished = false;
};

}  // namespace

// The loop's state, private to the gate's thread.
class GateLoop {
 public:
  explicit GateLoop(ConnectionGate& gate)
      : gate_(gate), strangers_log_(gate.setup_.on_event, "connections"),
        workers_log_(gate.setup_.on_event, "workers") {}

  void run() {
    std::vector<pollfd> polled;
    for (;;) {
      const auto now = Clock::now();
      const bool accepting = now >= accept_paused_until_;
      polled.clear();
      polled.push_back({gate_.wake_.get(), POLLIN, 0});
      polled.push_back({accepting ? gate_.listener_.get() : -1, POLLIN, 0});
      for (const auto& waiting : waiting_) polled.push_back({waiting.socket.get(), POLLIN, 0});
      if (::poll(polled.data(), polled.size(), timeout_ms(now)) < 0 && errno != EINTR) return;
      if (polled[0].revents != 0) return;  // the gate is closing
      for (std::size_t k = 0; k < waiting_.size(); ++k)
        if (polled[k + 2].revents != 0) read_answer(waiting_[k]);
      waiting_.erase(std::remove_if(waiting_.begin(), waiting_.end(), [](const Waiting& w) { return w.finished; }),
                     waiting_.end());
      expire(Clock::now());
      if (polled[1].revents & POLLIN) accept_all();
      strangers_log_.roll(Clock::now());
      workers_log_.roll(Clock::now());
    }
  }

 private:
  int timeout_ms(Clock::time_point now) const {
    auto until = std::min(strangers_log_.next_roll(), workers_log_.next_roll());
    if (!waiting_.empty()) until = std::min(until, waiting_.front().deadline);  // the oldest expires first
    if (now < accept_paused_until_) until = std::min(until, accept_paused_until_);
    const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1;
    return static_cast<int>(std::clamp<long long>(wait, 0, 10000));
  }

  void refuse(Waiting& waiting, const std::string& why, bool psgrad_peer = false) {
    ++gate_.refused_;
    if (psgrad_peer && gate_.setup_.on_refused_worker) gate_.setup_.on_refused_worker();
    if (psgrad_peer)
      workers_log_.add(fmt::format("refused worker from {}: {}", waiting.peer, why), Clock::now());
    else
      strangers_log_.add(fmt::format("refused a connection from {}: {}", waiting.peer, why), Clock::now());
    waiting.socket.reset();
    waiting.finished = true;
  }

  void read_answer(Waiting& waiting) {
    const auto got = ::recv(waiting.socket.get(), waiting.answer.data() + waiting.received,
                            waiting.answer.size() - waiting.received, MSG_DONTWAIT);
    if (got < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
      return refuse(waiting, fmt::format("the connection failed ({})", std::strerror(errno)));
    }
    if (got == 0)
      return refuse(waiting, waiting.received == 0 ? "it hung up without answering psgrad's greeting"
                                                   : "it hung up in the middle of its answer");
    waiting.received += static_cast<std::size_t>(got);
    if (!gate::could_be_answer(waiting.answer.data(), waiting.received))
      return refuse(waiting, fmt::format("it sent {} instead of psgrad's answer",
                                         gate::describe_opening(waiting.answer.data(), waiting.received)));
    if (waiting.received < waiting.answer.size()) return;
    const auto& setup = gate_.setup_;
    const auto verdict = gate::judge_answer(waiting.challenge, waiting.answer, setup.protocol, setup.token);
    const auto sent = ::send(waiting.socket.get(), verdict.data(), verdict.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
    const auto code = static_cast<gate::VerdictCode>(verdict[0]);
    if (code != gate::VerdictCode::admitted) {
      return refuse(waiting,
                    code == gate::VerdictCode::wrong_token
                        ? std::string("wrong join token")
                        : fmt::format("protocol version {} does not match the server's {}",
                                      gate::answer_protocol(waiting.answer), setup.protocol),
                    true);
    }
    if (sent != static_cast<ssize_t>(verdict.size()))
      return refuse(waiting, "the connection failed before it could be admitted");
    ++gate_.admitted_;
    gate_.hand_to_caf(std::move(waiting.socket));
    waiting.finished = true;
  }

  void expire(Clock::time_point now) {
    while (!waiting_.empty() && waiting_.front().deadline <= now) {
      refuse(waiting_.front(), fmt::format("no answer to psgrad's greeting within {:g} s",
                                           gate_.setup_.limits.answer_within.count() / 1000.0));
      waiting_.pop_front();
    }
  }

  void evict_oldest() {
    refuse(waiting_.front(), fmt::format("{} newer connections were waiting to answer psgrad's greeting",
                                         gate_.setup_.limits.max_waiting));
    waiting_.pop_front();
  }

  void accept_all() {
    for (;;) {
      sockaddr_storage address{};
      socklen_t size = sizeof address;
      UniqueSocket socket(::accept4(gate_.listener_.get(), reinterpret_cast<sockaddr*>(&address), &size,
                                    SOCK_NONBLOCK | SOCK_CLOEXEC));
      if (!socket) {
        if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
          // Out of descriptors: make room by dropping the oldest waiting peer, or stop accepting a
          // moment (the listener would otherwise wake the loop at once, forever).
          if (!waiting_.empty())
            evict_oldest();
          else
            accept_paused_until_ = Clock::now() + std::chrono::milliseconds(100);
        }
        return;  // EAGAIN: nobody else is knocking
      }
      if (waiting_.size() >= gate_.setup_.limits.max_waiting) evict_oldest();
      Waiting waiting;
      waiting.peer = peer_name(address);
      waiting.challenge = gate::make_challenge(gate_.setup_.protocol);
      waiting.deadline = Clock::now() + gate_.setup_.limits.answer_within;
      // A fresh socket's send buffer always takes 44 bytes; anything else means it is already gone.
      if (::send(socket.get(), waiting.challenge.data(), waiting.challenge.size(), MSG_DONTWAIT | MSG_NOSIGNAL) !=
          static_cast<ssize_t>(waiting.challenge.size()))
        continue;
      waiting.socket = std::move(socket);
      waiting_.push_back(std::move(waiting));
    }
  }

  ConnectionGate& gate_;
  // Psgrad peers refused for a wrong token or version have their own budget of lines, so a flood of
  // strangers cannot hide the one line a misconfigured worker's owner looks for.
  RefusalLog strangers_log_;
  RefusalLog workers_log_;
  std::deque<Waiting> waiting_;  // oldest first: every one has the same time to answer
  Clock::time_point accept_paused_until_{};
};

Result<std::unique_ptr<ConnectionGate>> ConnectionGate::open(caf::actor_system& system, GateSetup setup) {
  std::string problem;
  const auto addresses = resolve_address(setup.host, setup.port, true, problem);
  if (!addresses) return Error{fmt::format("cannot listen on {}:{}: {}", setup.host, setup.port, problem)};
  const addrinfo& address = *addresses;
  UniqueSocket listener(::socket(address.ai_family, address.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!listener) return Error{listen_errno_text(errno, setup.host, setup.port)};
  const int reuse = 1;  // as CAF publishes: a port in TIME_WAIT is free, a listening one is not
  ::setsockopt(listener.get(), SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof reuse);
  if (::bind(listener.get(), address.ai_addr, address.ai_addrlen) != 0 || ::listen(listener.get(), SOMAXCONN) != 0)
    return Error{listen_errno_text(errno, setup.host, setup.port)};
  sockaddr_storage bound{};
  socklen_t size = sizeof bound;
  ::getsockname(listener.get(), reinterpret_cast<sockaddr*>(&bound), &size);
  const auto port = ntohs(bound.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6&>(bound).sin6_port
                                                      : reinterpret_cast<sockaddr_in&>(bound).sin_port);
  std::unique_ptr<ConnectionGate> gate(new ConnectionGate(system, std::move(setup), std::move(listener), port));
  if (!gate->wake_) return Error{fmt::format("cannot start the gate: eventfd: {}", std::strerror(errno))};
  gate->thread_ = std::thread([raw = gate.get()] { raw->run(); });
  return gate;
}

ConnectionGate::ConnectionGate(caf::actor_system& system, GateSetup setup, UniqueSocket listener, std::uint16_t port)
    : system_(system),
      setup_(std::move(setup)),
      listener_(std::move(listener)),
      wake_(::eventfd(0, EFD_CLOEXEC)),
      port_(port) {}

ConnectionGate::~ConnectionGate() {
  if (thread_.joinable()) {
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto written = ::write(wake_.get(), &one, sizeof one);
    thread_.join();
  }
  // Forget the published actor, so CAF holds no reference to it for this port any more.
  close_published_port(system_, port_);
}

void ConnectionGate::run() {
  GateLoop loop(*this);
  loop.run();
}

// What CAF's own doorman does with an accepted socket, minus the accepting: the BASP broker adds it
// as a connection to the published actor and sends its server handshake.
void ConnectionGate::hand_to_caf(UniqueSocket socket) {
  const int fd = socket.release();
  watch_socket_backlog(fd);  // what a sync server's ordered answers look at (parameter_server.cpp)
  hand_accepted_socket_to_caf(system_, fd, port_, setup_.published, setup_.interface);
}

}  // namespace psgrad
