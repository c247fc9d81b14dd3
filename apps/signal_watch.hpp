// Ctrl-C and SIGTERM during a run: the first asks training to stop cleanly, a second one exits at once.
#pragma once

#include <atomic>
#include <chrono>
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
  void training_started() {
    auto expected = Phase::before_training;
    phase_.compare_exchange_strong(expected, Phase::training);
  }

  // A shell may deliver one request twice: `timeout -s INT` signals the process and then its process
  // group, a terminal's Ctrl-C reaches every process of the group. Signals this close after the first
  // count as that one; a second request must come later.
  static constexpr std::chrono::milliseconds same_request{500};

 private:
  void watch();

  std::shared_ptr<std::atomic<int>> received_ = std::make_shared<std::atomic<int>>(0);
  enum class Phase { before_training, training, closing };  // closing: the destructor ends the watch
  std::atomic<Phase> phase_{Phase::before_training};
  std::thread thread_;
};

// 128 + the signal, as a shell reports a process ended by it (130 for SIGINT, 143 for SIGTERM).
inline int exit_code_for_signal(int signal) { return 128 + signal; }

}  // namespace psgrad
