#include "runtime/idle_help.hpp"

#include "runtime/spin_pause.hpp"

namespace psgrad {

void IdleHelp::run(const std::function<void(int part)>& part) {
  if (in_use_.exchange(true, std::memory_order_acquire)) {
    part(0);
    part(1);
    return;
  }
  part_ = &part;
  state_.store(open, std::memory_order_release);
  part(0);
  int expected = open;
  if (state_.compare_exchange_strong(expected, closed, std::memory_order_acq_rel)) {
    part(1);  // nobody took it
  } else {
    while (state_.load(std::memory_order_acquire) != done) spin_pause();
    state_.store(closed, std::memory_order_relaxed);
  }
  in_use_.store(false, std::memory_order_release);
}

bool IdleHelp::help() {
  if (state_.load(std::memory_order_relaxed) != open) return false;
  int expected = open;
  if (!state_.compare_exchange_strong(expected, taken, std::memory_order_acquire)) return false;
  (*part_)(1);
  halves_helped_.fetch_add(1, std::memory_order_relaxed);
  state_.store(done, std::memory_order_release);
  return true;
}

bool IdleHelp::watch(std::chrono::microseconds first_wait, std::chrono::microseconds next_pass,
                     const std::atomic<bool>* stop) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + first_wait;
  bool helped = false;
  for (unsigned round = 1; stop == nullptr || !stop->load(std::memory_order_relaxed); ++round) {
    if (help()) {
      deadline = Clock::now() + next_pass;
      round = 0;
      helped = true;
    }
    // Reading the clock costs more than a pause: every 32 rounds is well under a microsecond apart.
    if (round % 32 == 0 && Clock::now() >= deadline) break;
    spin_pause();
  }
  return helped;
}

}  // namespace psgrad
