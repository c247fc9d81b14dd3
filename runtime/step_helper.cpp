#include "runtime/step_helper.hpp"

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
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      woken_.wait(lock, [this] { return wake_ || stop_.load(std::memory_order_acquire); });
      if (stop_.load(std::memory_order_acquire)) return;
      wake_ = false;  // a wake during this watch brings another one after it
    }
    watching_.store(true, std::memory_order_release);
    help_->watch(watch_, next_pass_, &stop_);
    watching_.store(false, std::memory_order_release);
  }
}

}  // namespace psgrad
