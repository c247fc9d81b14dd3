// Sync with cluster.ordered_answers: a step's answers to workers on other hosts go out one after another,
// each as soon as the one before has left this process's sockets.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include "caf/typed_response_promise.hpp"
#include "payloads/messages.hpp"

namespace psgrad {

// Sent side by side, N answers share the server's link and all arrive at its end, so every worker
// starts computing only then, and the next step's gradients in turn share the link's other direction:
// about 2·N message times a step. One after another, the first workers compute and push while later
// answers are on the wire: about N + 1. The next goes out as soon as the one before has left this
// process's sockets for the wire (pace: the kernel's count of bytes not yet acknowledged, less what a
// round trip keeps in flight), or the worker says it received its weights, or after receipt_wait
// without either (a lost or slow worker holds nobody up). Waiting for the receipt alone leaves the link
// idle for a round trip between answers. Connections that did not come through psgrad's gate (TLS) are
// not watched: there the receipt paces. With K shards each sends K answers at a time: a worker receives
// all K slices over its own link, which one answer at a time would leave the shards' links idle for
// (K - 1) / K of the time.
class AnswerPacer {
 public:
  static constexpr std::chrono::milliseconds receipt_wait{1000};
  // Asks the owner to call back after a delay: receipt_wait_ran_out, or pace.
  using Timer = std::function<void(std::chrono::nanoseconds after)>;

  AnswerPacer(Timer receipt_timer, Timer pace_timer)
      : receipt_timer_(std::move(receipt_timer)), pace_timer_(std::move(pace_timer)) {}

  // How many answers may be out at once: one per shard.
  void answer_at_once(std::size_t count) { at_once_ = std::max<std::size_t>(count, 1); }

  // Queues an answer (in worker order); send_next puts it out when its turn comes.
  void queue(caf::typed_response_promise<Weights> promise, Weights weights, std::uint32_t worker);
  void send_next();
  // A worker's receipt of its answer: the next answer goes.
  void received(std::uint32_t worker, std::uint64_t version);
  // Answers whose receipt did not come in time count as received.
  void receipt_wait_ran_out();
  // Answers whose bytes are all in the kernel, with little left queued, have left: the next ones go.
  void pace();
  // Members changed or the run broke: nobody is waited for.
  void send_every_answer();
  // The server is gone: nothing is sent.
  void forget() {
    awaiting_.clear();
    queued_.clear();
  }

 private:
  struct Queued {
    caf::typed_response_promise<Weights> promise;
    Weights weights;
    std::uint32_t worker = 0;
  };
  // An answer out with no receipt yet.
  struct Awaited {
    std::uint32_t worker = 0;
    std::uint64_t version = 0;
    std::int64_t deadline = 0;  // steady_now_ns() by which it counts as received anyway
    // SocketBacklog::written once its bytes are all in the kernel (0: sockets not watched)
    std::uint64_t written_when_in = 0;
  };

  void arm_receipt_timer();
  void arm_pace_timer(std::chrono::microseconds after);

  Timer receipt_timer_;
  Timer pace_timer_;
  std::size_t at_once_ = 1;
  std::deque<Queued> queued_;      // not sent yet, in worker order
  std::vector<Awaited> awaiting_;  // in the order they were sent
  bool receipt_timer_armed_ = false;
  bool pace_timer_armed_ = false;
};

}  // namespace psgrad
