// Ctrl-C and SIGTERM during a run: the first asks training to stop cleanly, a second one exits at once.
#pragma once

#include <atomic>
#include <memory>
#include <thread>

namespace psgrad {

class SignalWatch {
 public:
  // Blocks SIGINT and SIGTERM in this thread and every thread started after it (so create it before
  // the actor system), and receives them on a thread of its own.
  SignalWatch();
  ~SignalWatch();
  SignalWatch(const SignalWatch&) = delete;
  SignalWatch& operator=(const SignalWatch&) = delete;

  // The first signal's number once one came, else 0; the driver polls it at every step.
  std::shared_ptr<const std::atomic<int>> flag() const { return received_; }
  // Until a run is under way there is nothing to save: a signal then exits at once.
  void training_started() { training_.store(true); }

 private:
  void watch();

  std::shared_ptr<std::atomic<int>> received_ = std::make_shared<std::atomic<int>>(0);
  std::atomic<bool> training_{false};
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

// 128 + the signal, as a shell reports a process ended by it (130 for SIGINT, 143 for SIGTERM).
inline int exit_code_for_signal(int signal) { return 128 + signal; }

}  // namespace psgrad
