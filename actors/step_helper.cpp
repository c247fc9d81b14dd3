#include "actors/step_helper.hpp"

#include "actors/spin_pause.hpp"

namespace psgrad {

StepHelper::StepHelper(std::shared_ptr<IdleHelp> help, std::chrono::microseconds watch,
                       std::chrono::microseconds next_pass)
    : help_(std::move(help)), watch_(watch), next_pass_(next_pass), thread_([this] { loop(); }) {}

StepHelper::~StepHelper() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
  }
  woken_.notify_one();
  thread_.join();
}

void StepHelper::wake() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    wake_ = true;
  }
  woken_.notify_one();
}

void StepHelper::loop() {
  using Clock = std::chrono::steady_clock;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      woken_.wait(lock, [this] { return wake_ || stop_.load(std::memory_order_acquire); });
      if (stop_.load(std::memory_order_acquire)) return;
      wake_ = false;  // a wake during this watch brings another one after it
    }
    watching_.store(true, std::memory_order_release);
    auto deadline = Clock::now() + watch_;
    // Reading the clock costs more than a pause: every 32 rounds is well under a microsecond apart.
    for (unsigned round = 1; !stop_.load(std::memory_order_relaxed); ++round) {
      if (help_->help()) {
        deadline = Clock::now() + next_pass_;
        round = 0;
      }
      if (round % 32 == 0 && Clock::now() >= deadline) break;
      spin_pause();
    }
    watching_.store(false, std::memory_order_release);
  }
}

}  // namespace psgrad
