// How a worker process waits for a server that answers nothing: when it counts as silent, and when to give up.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>

namespace psgrad {

// Whether the server is silent now, set by the thread that watches it (ServerWait's) and read by the
// worker's own answer watch on another: time the server is silent counts toward the wait for it
// (cluster.server_wait_ms), not toward a push's answer timeout.
class ServerSilence {
 public:
  void set(bool silent) { silent_.store(silent, std::memory_order_relaxed); }
  bool silent() const { return silent_.load(std::memory_order_relaxed); }

 private:
  std::atomic<bool> silent_{false};
};

// A stopped or stalled server keeps its connection open, so only its silence tells: the worker asks it
// something small every interval, one question out at a time. The server is silent while a question
// has waited longer than an interval, and given up on once nothing has come for longer than the limit.
// Times are steady nanoseconds (runtime/steady_time.hpp).
class ServerWait {
 public:
  // limit 0: wait forever (still asking, so the worker's answer watch knows when the server is silent).
  ServerWait(std::chrono::milliseconds limit, std::int64_t now_ns)
      : limit_(limit),
        interval_(limit.count() > 0
                      ? std::clamp(limit / 4, std::chrono::milliseconds(50), std::chrono::milliseconds(1000))
                      : std::chrono::milliseconds(1000)),
        asked_at_(now_ns - nanoseconds(interval_)),
        heard_at_(now_ns) {}

  std::chrono::milliseconds limit() const { return limit_; }
  // How often to ask, and to look at the clock.
  std::chrono::milliseconds interval() const { return interval_; }

  bool ask_now(std::int64_t now_ns) const { return !waiting_ && now_ns - asked_at_ >= nanoseconds(interval_); }
  void asked(std::int64_t now_ns) {
    waiting_ = true;
    asked_at_ = now_ns;
  }
  void answered(std::int64_t now_ns) {
    waiting_ = false;
    heard_at_ = now_ns;
  }

  bool silent(std::int64_t now_ns) const { return waiting_ && now_ns - asked_at_ > nanoseconds(interval_); }
  bool given_up(std::int64_t now_ns) const { return limit_.count() > 0 && now_ns - heard_at_ > nanoseconds(limit_); }

 private:
  static std::int64_t nanoseconds(std::chrono::milliseconds duration) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count();
  }

  std::chrono::milliseconds limit_;
  std::chrono::milliseconds interval_;
  bool waiting_ = false;     // a question is out
  std::int64_t asked_at_;    // when the last question went out
  std::int64_t heard_at_;    // the last answer, or the start
};

}  // namespace psgrad
