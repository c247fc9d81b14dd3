// A served run's wait for the processes that join it: asked in slices of 200 ms, so that a signal, a
// table shard lost while others join, or the end of the processes the server started is noticed while
// nobody answers.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "caf/actor_system.hpp"
#include "caf/error.hpp"
#include "model/result.hpp"

namespace psgrad {

struct JoinWait {
  std::chrono::milliseconds timeout{600000};           // 0: forever
  std::shared_ptr<const std::atomic<int>> interrupt;  // non-zero: a signal came
  std::function<std::string()> joiners_gone;          // see ServeSetup::joiners_gone; empty: not asked
  std::function<std::string()> lost;                  // a joined table shard lost, else empty; empty: not asked
};

// What is waited for, in the lines that say why the wait ended.
struct Awaited {
  std::function<std::string()> what;     // "workers (1 of 2 joined)"
  std::function<std::string()> gave_up;  // the line once the timeout passes
};

// Asks `ask` (a slice's length -> the error of its answer; none once it came) until it answers. The
// refusal is one line: a signal ("stopped by a signal while waiting for ...; nothing to save yet"),
// another error, a loss, the processes gone, or the timeout.
Status wait_for_joins(caf::actor_system& system, const JoinWait& wait, const Awaited& awaited,
                      const std::function<caf::error(std::chrono::milliseconds)>& ask);

}  // namespace psgrad
