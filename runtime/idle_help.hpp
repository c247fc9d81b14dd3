// Work a busy scheduler thread hands to an idle one that is polling for work, or to a worker waiting
// for its answer: the second half of each pass of a server step (model/two_part_runner.hpp). With
// nobody polling, the busy thread does both halves.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>

#include "model/two_part_runner.hpp"

namespace psgrad {

// How long a waiting worker (DataWorkerSetup::help) or a step helper (StepHelper) watches for half a
// server step to take on: a sleeping thread takes 60-95 µs to wake on this kind of machine, then
// steps. After it helped, how long it watches for the step's next pass.
constexpr std::chrono::microseconds kStepHelpWait{300};
constexpr std::chrono::microseconds kNextPassWait{100};

class IdleHelp final : public TwoPartRunner {
 public:
  // Offers part(1) to a polling thread while it runs part(0), then runs part(1) itself unless a helper
  // took it (then waits for it: the two halves are about equal). One step at a time: a second caller
  // meanwhile runs both of its halves itself.
  void run(const std::function<void(int part)>& part) override;

  // For a polling thread: runs the half on offer, if any. True when it did.
  bool help();

  // Spins taking offered halves until none came for `first_wait` (then `next_pass` after each one
  // taken: a step offers its passes one right after the other), or until `stop` is set. True when it
  // took one.
  bool watch(std::chrono::microseconds first_wait, std::chrono::microseconds next_pass,
             const std::atomic<bool>* stop = nullptr);

  // How many halves help() has run, for tests and traces.
  std::uint64_t halves_helped() const { return halves_helped_.load(std::memory_order_relaxed); }

 private:
  enum State : int { closed, open, taken, done };
  std::atomic<int> state_{closed};
  std::atomic<bool> in_use_{false};
  std::atomic<std::uint64_t> halves_helped_{0};
  const std::function<void(int)>* part_ = nullptr;  // written before state_ opens, read once taken
};

}  // namespace psgrad
