// This process's monotonic clock in nanoseconds: the time base of worker timings and trace spans.
#pragma once

#include <chrono>
#include <cstdint>

namespace psgrad {

inline std::int64_t steady_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace psgrad
