// A thread of a server process that takes on the second half of each pass of a plain sync step
// (IdleHelp), woken as the step starts: in such a process no scheduler thread polls for work, and
// through a plain sync step every worker waits for the server, so a core is idle.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "runtime/idle_help.hpp"

namespace psgrad {

class StepHelper {
 public:
  // Once woken, it watches for an offered half for `watch`, and for `next_pass` after each it took.
  StepHelper(std::shared_ptr<IdleHelp> help, std::chrono::microseconds watch, std::chrono::microseconds next_pass);
  ~StepHelper();  // ends a watch under way
  StepHelper(const StepHelper&) = delete;
  StepHelper& operator=(const StepHelper&) = delete;

  // A step starts: watch for its halves (after the watch under way, if any).
  void wake();

  // Whether it watches now (for tests).
  bool watching() const { return watching_.load(std::memory_order_acquire); }

 private:
  void loop();

  const std::shared_ptr<IdleHelp> help_;
  const std::chrono::microseconds watch_;
  const std::chrono::microseconds next_pass_;
  std::mutex mutex_;
  std::condition_variable woken_;
  bool wake_ = false;  // under mutex_
  std::atomic<bool> stop_{false};
  std::atomic<bool> watching_{false};
  std::thread thread_;  // last: it starts once the rest is made
};

}  // namespace psgrad
