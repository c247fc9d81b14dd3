// Runs a continuation once a known number of answers are in: the join of parallel requests.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

namespace psgrad {

// A copyable handle: every answer (success or failure alike) calls it once; the call that brings the
// count to zero runs `then`. Copies share one count, so each request's handler can hold one.
class Countdown {
 public:
  Countdown(std::size_t count, std::function<void()> then)
      : state_(std::make_shared<State>(State{count, std::move(then)})) {
    if (count == 0) state_->then();
  }
  void operator()() const {
    if (state_->remaining > 0 && --state_->remaining == 0) state_->then();
  }
  // For a count known only after the requests are sent: start at 1, add one per request, and call
  // once more when all are out.
  void add() const { ++state_->remaining; }

 private:
  struct State {
    std::size_t remaining;
    std::function<void()> then;
  };
  std::shared_ptr<State> state_;
};

}  // namespace psgrad
