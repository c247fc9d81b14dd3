// Bounds how long a command may take to end once its work is done and saved, so that a peer CAF still
// waits on at shutdown cannot keep the process (and whatever waits for it) alive.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace psgrad {

class ShutdownDeadline {
 public:
  explicit ShutdownDeadline(std::chrono::seconds limit) : limit_(limit) {}
  ShutdownDeadline(const ShutdownDeadline&) = delete;
  ShutdownDeadline& operator=(const ShutdownDeadline&) = delete;

  // Declared before the actor system, so this runs after the system's own shutdown.
  ~ShutdownDeadline() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    woken_.notify_one();
    if (watch_.joinable()) watch_.join();
  }

  // From now on, the process ends with `exit_code` after the limit unless this is destroyed first.
  void arm(int exit_code) {
    if (watch_.joinable()) return;
    watch_ = std::thread([this, exit_code] {
      std::unique_lock<std::mutex> lock(mutex_);
      if (woken_.wait_for(lock, limit_, [this] { return done_; })) return;
      std::fprintf(stderr, "psgrad: the actor system did not shut down within %lld s of the end; exiting anyway "
                           "(everything was saved)\n",
                   static_cast<long long>(limit_.count()));
      std::fflush(nullptr);
      std::_Exit(exit_code);
    });
  }

 private:
  std::chrono::seconds limit_;
  std::mutex mutex_;
  std::condition_variable woken_;
  bool done_ = false;
  std::thread watch_;
};

}  // namespace psgrad
