#include "actors/answer_pacer.hpp"

#include <algorithm>

#include "runtime/socket_backlog.hpp"
#include "runtime/steady_time.hpp"

namespace psgrad {

void AnswerPacer::queue(caf::typed_response_promise<Weights> promise, Weights weights, std::uint32_t worker) {
  queued_.push_back(Queued{std::move(promise), std::move(weights), worker});
}

void AnswerPacer::send_next() {
  if (awaiting_.size() >= at_once_ || queued_.empty()) return arm_receipt_timer();
  const auto sockets = socket_backlog();
  auto written = sockets.written;
  while (awaiting_.size() < at_once_ && !queued_.empty()) {
    auto next = std::move(queued_.front());
    queued_.pop_front();
    const auto deadline = steady_now_ns() + std::chrono::nanoseconds(receipt_wait).count();
    written += wire_bytes(next.weights.values);
    awaiting_.push_back(Awaited{next.worker, next.weights.version, deadline, sockets.sockets > 0 ? written : 0});
    next.promise.deliver(std::move(next.weights));
  }
  arm_receipt_timer();
  // A first look as soon as CAF's network thread has had its turn (on a fast link the answer may have
  // left by then), later ones timed by the backlog.
  if (sockets.sockets > 0) arm_pace_timer(std::chrono::microseconds(0));
}

void AnswerPacer::received(std::uint32_t worker, std::uint64_t version) {
  const auto found = std::find_if(awaiting_.begin(), awaiting_.end(), [&](const Awaited& awaited) {
    return awaited.worker == worker && awaited.version == version;
  });
  if (found == awaiting_.end()) return;
  awaiting_.erase(found);
  send_next();
}

// One timer at a time, for the oldest answer out (awaiting_ is in the order they were sent), rather
// than one per answer: a receipt usually comes first, and each timer is a wake-up of CAF's clock.
void AnswerPacer::arm_receipt_timer() {
  if (receipt_timer_armed_ || awaiting_.empty()) return;
  const auto left = std::max<std::int64_t>(awaiting_.front().deadline - steady_now_ns(), 0);
  receipt_timer_(std::chrono::nanoseconds(left));
  receipt_timer_armed_ = true;
}

void AnswerPacer::receipt_wait_ran_out() {
  receipt_timer_armed_ = false;
  const auto now = steady_now_ns();
  awaiting_.erase(std::remove_if(awaiting_.begin(), awaiting_.end(),
                                 [now](const Awaited& awaited) { return awaited.deadline <= now; }),
                  awaiting_.end());
  send_next();  // and arms the timer for the oldest answer still out
}

void AnswerPacer::arm_pace_timer(std::chrono::microseconds after) {
  if (pace_timer_armed_) return;
  pace_timer_(after);
  pace_timer_armed_ = true;
}

// With no more queued than the link sends in about half a millisecond (the next answer's own way into
// the kernel), the answers whose bytes are all in the kernel have left.
void AnswerPacer::pace() {
  pace_timer_armed_ = false;
  const auto sockets = socket_backlog();
  const auto soon = static_cast<std::uint64_t>(std::max(sockets.bytes_per_second * 0.0005, 16384.0));
  const bool drained = sockets.queued <= soon;
  const auto before = awaiting_.size();
  awaiting_.erase(std::remove_if(awaiting_.begin(), awaiting_.end(),
                                 [&](const Awaited& awaited) {
                                   return awaited.written_when_in != 0 && drained &&
                                          sockets.written >= awaited.written_when_in;
                                 }),
                  awaiting_.end());
  if (awaiting_.size() != before) send_next();  // which looks at once at the ones it sends
  const auto watched = std::find_if(awaiting_.begin(), awaiting_.end(),
                                    [](const Awaited& awaited) { return awaited.written_when_in != 0; });
  // No watched connection left (they closed): receipts and the wait for them take over.
  if (pace_timer_armed_ || watched == awaiting_.end() || sockets.sockets == 0) return;
  // Looks again in 0.2 ms while the answer is still on its way into the kernel, in 1 ms while no rate
  // is known yet, and else when the queue should have drained (0.2-5 ms on).
  auto wait = std::chrono::microseconds(200);
  if (sockets.written >= watched->written_when_in) {
    if (sockets.bytes_per_second <= 0) {
      wait = std::chrono::microseconds(1000);
    } else if (!drained) {
      const auto seconds = static_cast<double>(sockets.queued - soon) / sockets.bytes_per_second;
      wait = std::chrono::microseconds(std::clamp<std::int64_t>(static_cast<std::int64_t>(seconds * 1e6), 200, 5000));
    }
  }
  arm_pace_timer(wait);
}

void AnswerPacer::send_every_answer() {
  awaiting_.clear();
  for (auto& queued : queued_) queued.promise.deliver(std::move(queued.weights));
  queued_.clear();
}

}  // namespace psgrad
