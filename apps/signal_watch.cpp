#include "apps/signal_watch.hpp"

#include <csignal>
#include <cstdio>
#include <ctime>
#include <unistd.h>

#include <fmt/format.h>

namespace psgrad {

namespace {

sigset_t stop_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

}  // namespace

SignalWatch::SignalWatch() {
  const auto set = stop_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  thread_ = std::thread([this] { watch(); });
}

SignalWatch::~SignalWatch() {
  phase_.store(Phase::closing);
  thread_.join();
  // Signals that come while the process shuts down are handled as before the run: they end it.
  const auto set = stop_signals();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

void SignalWatch::watch() {
  const auto set = stop_signals();
  const timespec poll{0, 100'000'000};  // how often the destructor's request to stop is noticed
  std::chrono::steady_clock::time_point first_at;
  while (phase_.load() != Phase::closing) {
    const int signal = sigtimedwait(&set, nullptr, &poll);
    if (signal <= 0) continue;
    const char* name = signal == SIGINT ? "SIGINT" : "SIGTERM";
    const auto now = std::chrono::steady_clock::now();
    if (received_->load() != 0 && now - first_at < same_request) continue;
    if (phase_.load() != Phase::training || received_->load() != 0) {
      fmt::print(stderr, "\npsgrad: {}: stopping now\n", name);
      std::fflush(stderr);
      _exit(exit_code_for_signal(signal));
    }
    first_at = now;
    received_->store(signal);
    fmt::print(stderr, "\npsgrad: {}: stopping after the current step to save the run (again to stop now)\n", name);
    std::fflush(stderr);
  }
}

}  // namespace psgrad
