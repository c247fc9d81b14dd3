#include "actors/idle_help.hpp"

#include "actors/spin_pause.hpp"

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

}  // namespace psgrad
