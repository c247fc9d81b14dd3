// A fixed delay for a stream of packets: each is released a set time after it arrived, in arrival order.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>

#include "model/result.hpp"

namespace psgrad {

using LinkClock = std::chrono::steady_clock;

// "1ms", "500us", "0.5ms", "2s", "0ms": tc's spelling of a delay, so the simulator passes --delay on.
inline Result<std::chrono::nanoseconds> parse_link_delay(const std::string& text) {
  const auto expected = Error{"delay '" + text + "': expected a time like 1ms, 500us or 0.5ms"};
  std::size_t number_end = 0;
  double amount = 0;
  try {
    amount = std::stod(text, &number_end);
  } catch (const std::exception&) {
    return expected;
  }
  if (number_end == 0 || !(text[0] >= '0' && text[0] <= '9') || amount < 0) return expected;
  const std::string unit = text.substr(number_end);
  double nanoseconds_per_unit = 0;
  if (unit == "us") nanoseconds_per_unit = 1e3;
  else if (unit == "ms") nanoseconds_per_unit = 1e6;
  else if (unit == "s") nanoseconds_per_unit = 1e9;
  else return expected;
  const double nanoseconds = amount * nanoseconds_per_unit;
  if (nanoseconds > 10e9) return Error{"delay '" + text + "': more than 10 s is not a link's delay"};
  return std::chrono::nanoseconds(static_cast<std::int64_t>(nanoseconds + 0.5));
}

// Packets wait in arrival order; with one delay for all, the oldest is always the next one due, so a
// FIFO is the whole schedule and one batch verdict releases every packet up to the newest due one.
class DelayLine {
 public:
  explicit DelayLine(std::chrono::nanoseconds delay) : delay_(delay) {}

  void arrived(std::uint32_t packet_id, LinkClock::time_point when) {
    waiting_.push_back({packet_id, when + delay_});
  }

  // The id of the newest packet due by `now` (all older ones are due too), removed with them.
  std::optional<std::uint32_t> take_due(LinkClock::time_point now) {
    std::optional<std::uint32_t> newest;
    while (!waiting_.empty() && waiting_.front().due <= now) {
      newest = waiting_.front().packet_id;
      waiting_.pop_front();
    }
    return newest;
  }

  // When the oldest waiting packet is due; nothing when none waits.
  std::optional<LinkClock::time_point> next_due() const {
    if (waiting_.empty()) return std::nullopt;
    return waiting_.front().due;
  }

  std::size_t waiting() const { return waiting_.size(); }

 private:
  struct Waiting {
    std::uint32_t packet_id;
    LinkClock::time_point due;
  };
  std::chrono::nanoseconds delay_;
  std::deque<Waiting> waiting_;
};

}  // namespace psgrad
