#include "apps/launched_role.hpp"

#include <chrono>
#include <csignal>
#include <string>
#include <thread>
#include <unistd.h>

#include "apps/output_relay.hpp"

namespace psgrad {

namespace {

constexpr std::size_t max_token_bytes = 4096;

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
  // Our output's reader may go before we do (that is when the input ends): see output_relay.hpp.
  relay_output();
  std::thread(stop_when_input_ends, role).detach();
  return token;
}

}  // namespace psgrad
