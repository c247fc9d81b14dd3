#include "apps/output_relay.hpp"

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace psgrad {

namespace {

std::vector<std::thread>& relays() {
  static std::vector<std::thread> threads;
  return threads;
}

void copy_until_closed(int from, int to) {
  char buffer[4096];
  bool reader_gone = false;
  for (;;) {
    const auto n = ::read(from, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t done = 0; !reader_gone && done < n;) {
      const auto written = ::write(to, buffer + done, static_cast<std::size_t>(n - done));
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) reader_gone = true;  // keep draining, so our own writes never block
      else done += written;
    }
  }
  ::close(from);
  ::close(to);
}

// At exit: end our side of the pipes (the streams now write to /dev/null) and let the relays finish.
void finish_relays() {
  std::fflush(stdout);
  std::fflush(stderr);
  const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (null < 0) return;
  ::dup2(null, STDOUT_FILENO);
  ::dup2(null, STDERR_FILENO);
  ::close(null);
  for (auto& relay : relays())
    if (relay.joinable()) relay.join();
}

}  // namespace

void relay_output() {
  // Writes to a stream whose reader is gone fail with EPIPE in the relay, instead of a signal.
  std::signal(SIGPIPE, SIG_IGN);
  for (int stream : {STDOUT_FILENO, STDERR_FILENO}) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) continue;
    const int real = ::fcntl(stream, F_DUPFD_CLOEXEC, 3);
    if (real < 0 || ::dup2(ends[1], stream) < 0) {
      ::close(ends[0]);
      ::close(ends[1]);
      if (real >= 0) ::close(real);
      continue;
    }
    ::close(ends[1]);
    // The relay must not take the process's signals either.
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    relays().emplace_back(copy_until_closed, ends[0], real);
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
  }
  std::atexit(finish_relays);
}

}  // namespace psgrad
