// Which server owes an answer and has been silent for too long: the timeout of the requests a worker
// sends every step, which carry no CAF timeout (see ServerGroup).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace psgrad {

class AnswerWatch {
 public:
  explicit AnswerWatch(std::size_t servers) : owed_(servers, 0), since_(servers, 0) {}

  void asked(std::size_t server, std::int64_t now_ns) {
    if (owed_[server]++ == 0) since_[server] = now_ns;
  }
  // An answer or an error: either way the server (or CAF on its behalf) said something.
  void answered(std::size_t server, std::int64_t now_ns) {
    if (owed_[server] > 0) --owed_[server];
    since_[server] = now_ns;
  }

  // Every answer owed counts again from now: while the servers' process was silent, the worker waited
  // for it as a whole (cluster.server_wait_ms), and an answer's timeout counts only time it was heard from.
  void restart(std::int64_t now_ns) {
    for (std::size_t i = 0; i < owed_.size(); ++i)
      if (owed_[i] > 0) since_[i] = now_ns;
  }

  // The first server that owes an answer and has said nothing for longer than `timeout`: nothing since
  // it was asked with nothing owed, or since its last answer.
  std::optional<std::size_t> silent(std::int64_t now_ns, std::chrono::nanoseconds timeout) const {
    for (std::size_t i = 0; i < owed_.size(); ++i)
      if (owed_[i] > 0 && now_ns - since_[i] > timeout.count()) return i;
    return std::nullopt;
  }

 private:
  std::vector<std::uint32_t> owed_;  // requests not answered yet, per server
  std::vector<std::int64_t> since_;  // steady ns of the last ask with nothing owed, or the last answer
};

// How often a timer looks for a peer silent longer than `timeout` (the driver for its workers, a worker
// for its servers): a quarter of it, within 50 ms and 1 s.
inline std::chrono::milliseconds watch_interval(std::chrono::milliseconds timeout) {
  return std::clamp(timeout / 4, std::chrono::milliseconds(50), std::chrono::milliseconds(1000));
}

}  // namespace psgrad
