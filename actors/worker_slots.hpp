// The driver's view of its workers: who takes part, who has a request out, and each one's clock.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "actors/interfaces.hpp"

namespace psgrad {

struct WorkerSlot {
  DataWorkerActor handle;
  std::string name;         // for messages, e.g. the worker's host
  bool alive = false;
  bool in_loop = false;     // its push/pull loop runs
  std::uint64_t clock = 0;  // gradients of this worker applied so far (ssp's clock)
  std::uint64_t granted = 0;  // async/ssp: credits handed out so far; granted - clock are in flight
  std::chrono::steady_clock::time_point last_progress;  // its last credit, gradient, or step begun (sync)
  std::uint64_t round = 0;  // which request the outstanding one is, to ignore stale answers
  std::int64_t sent_at = 0;  // when the outstanding request went out (steady clock, ns), for the trace
};

class WorkerSlots {
 public:
  std::size_t size() const { return slots_.size(); }
  WorkerSlot& operator[](std::size_t k) { return slots_[k]; }
  const WorkerSlot& operator[](std::size_t k) const { return slots_[k]; }
  std::vector<WorkerSlot>::iterator begin() { return slots_.begin(); }
  std::vector<WorkerSlot>::iterator end() { return slots_.end(); }

  // Puts worker k in its slot (growing the table); a newcomer starts at the slowest worker's clock,
  // so it does not hold the others back (ssp).
  void add(std::size_t k, DataWorkerActor handle, std::string name) {
    if (slots_.size() <= k) slots_.resize(k + 1);
    const auto start_clock = alive_count() > 0 ? min_clock() : 0;
    slots_[k] = WorkerSlot{std::move(handle), std::move(name), true};
    slots_[k].clock = start_clock;
  }

  std::size_t alive_count() const {
    return static_cast<std::size_t>(std::count_if(slots_.begin(), slots_.end(), [](const WorkerSlot& s) { return s.alive; }));
  }


  // The slowest live worker's clock (0 when none is alive).
  std::uint64_t min_clock() const {
    std::uint64_t lowest = UINT64_MAX;
    for (const auto& slot : slots_)
      if (slot.alive) lowest = std::min(lowest, slot.clock);
    return lowest == UINT64_MAX ? 0 : lowest;
  }

  std::string name(std::size_t k) const {
    return k < slots_.size() && !slots_[k].name.empty() ? fmt::format("worker {} on {}", k, slots_[k].name)
                                                        : fmt::format("worker {}", k);
  }

 private:
  std::vector<WorkerSlot> slots_;
};

}  // namespace psgrad
