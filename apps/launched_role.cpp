#include "apps/launched_role.hpp"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <thread>
#include <unistd.h>

namespace psgrad {

namespace {

constexpr std::size_t max_token_bytes = 4096;

// Once the launch is gone nobody reads our output: a write would end us by SIGPIPE before a server
// has saved its run. A pipe with no reader polls as an error; such output goes to /dev/null instead.
void silence_unread_output() {
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0) return;
  for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
    pollfd probe{fd, POLLOUT, 0};
    if (::poll(&probe, 1, 0) == 1 && (probe.revents & POLLERR)) ::dup2(null, fd);
  }
  ::close(null);
}

void stop_when_input_ends(LaunchedAs role) {
  // This thread must never take SIGINT or SIGTERM itself: they go to the process's own handling.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // Input ends (graceful), or says "stop now": nothing worth saving yet, or a second Ctrl-C.
  char buffer[256];
  std::string line;
  bool now = false;
  while (!now) {
    const auto n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    line.append(buffer, static_cast<std::size_t>(n));
    now = line.find("stop now\n") != std::string::npos;
    if (line.size() > 4096) line.erase(0, line.size() - 16);
  }
  // The launch closes our input and output together when it dies (or sshd does, when a connection
  // drops): give the other end a moment to close too.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  silence_unread_output();
  if (!now && role == LaunchedAs::follower) std::this_thread::sleep_for(std::chrono::seconds(10));
  kill(getpid(), SIGTERM);
  if (now) {
    // Two signals at once would merge into one pending signal: the first must be taken before the second.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    kill(getpid(), SIGTERM);
    return;
  }
  // A server still waiting for its workers does not stop at the first signal; the second ends it.
  std::this_thread::sleep_for(std::chrono::seconds(10));
  kill(getpid(), SIGTERM);
}

}  // namespace

Result<std::string> take_launch_token(LaunchedAs role) {
  std::string token;
  char c = 0;
  for (;;) {
    const auto n = ::read(STDIN_FILENO, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Error{"--launched: standard input ended before the join token line"};
    if (c == '\n') break;
    if (token.size() >= max_token_bytes) return Error{"--launched: the join token line is longer than 4096 bytes"};
    token += c;
  }
  std::thread(stop_when_input_ends, role).detach();
  return token;
}

}  // namespace psgrad
