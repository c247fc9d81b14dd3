// When a worker waiting for its answer watches for half a server step to take on: every push while it
// finds halves, and ever more rarely while it does not.
#pragma once

#include <algorithm>
#include <cstdint>

namespace psgrad {

// A watch that finds no half on offer means the server's thread did not step beside the worker: another
// process holds the other core, and the spinning worker only delays the step (psgrad train, 1 worker,
// with one busy loop beside it: 44k samples/s watching on every push, 48k not watching). After n misses
// in a row the worker skips the next 2^n - 1 pushes (at most 63), and watches on every push again once a
// watch finds a half.
class HelpBackoff {
 public:
  static constexpr unsigned kMostSkippedPushes = 63;

  // Whether to watch after this push.
  bool watch_now() {
    if (skip_ == 0) return true;
    --skip_;
    return false;
  }

  // What the watch found.
  void record(bool helped) {
    if (helped) {
      misses_ = 0;
      return;
    }
    misses_ = std::min(misses_ + 1, 6u);
    skip_ = std::min((1u << misses_) - 1, kMostSkippedPushes);
  }

 private:
  unsigned misses_ = 0;
  unsigned skip_ = 0;
};

}  // namespace psgrad
