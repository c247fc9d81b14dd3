// Work a busy scheduler thread hands to an idle one that is polling for work, or to a worker waiting
// for its answer: the second half of each pass of a server step (model/two_part_runner.hpp). With
// nobody polling, the busy thread does both halves.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "model/two_part_runner.hpp"

namespace psgrad {

class IdleHelp final : public TwoPartRunner {
 public:
  // Offers part(1) to a polling thread while it runs part(0), then runs part(1) itself unless a helper
  // took it (then waits for it: the two halves are about equal). One step at a time: a second caller
  // meanwhile runs both of its halves itself.
  void run(const std::function<void(int part)>& part) override;

  // For a polling thread: runs the half on offer, if any. True when it did.
  bool help();

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
