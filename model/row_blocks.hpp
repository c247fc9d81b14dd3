// Rows of one width kept in fixed-size blocks: a table or a row optimizer's state grows a block at a
// time, and no row ever moves. A single vector grown by doubling copied every row made so far at each
// doubling and faulted in fresh pages for the copy: in a run whose tables fill up as it trains, that
// was a tenth of the shard's time. A block gets its pages in one system call (populated_pages.hpp).
#pragma once

#include <cstddef>
#include <vector>

#include "model/aligned_floats.hpp"

namespace psgrad {

class RowBlocks {
 public:
  // New rows hold `fill` in every float.
  explicit RowBlocks(std::size_t width, float fill = 0.0f) : width_(width), fill_(fill) {}

  std::size_t width() const { return width_; }
  std::size_t size() const { return rows_; }  // rows made so far

  float* row(std::size_t slot) { return blocks_[slot >> kShift].data() + (slot & kMask) * width_; }
  const float* row(std::size_t slot) const { return blocks_[slot >> kShift].data() + (slot & kMask) * width_; }

  // Makes rows up to `rows` (none when it has that many).
  void grow_to(std::size_t rows) {
    if (rows <= rows_) return;
    while (blocks_.size() << kShift < rows) blocks_.emplace_back(kRowsPerBlock * width_, fill_);
    rows_ = rows;
  }

 private:
  static constexpr std::size_t kShift = 10;
  static constexpr std::size_t kRowsPerBlock = std::size_t{1} << kShift;  // 128 KiB a block at width 32
  static constexpr std::size_t kMask = kRowsPerBlock - 1;

  std::size_t width_;
  float fill_;
  std::size_t rows_ = 0;
  std::vector<AlignedFloats> blocks_;
};

}  // namespace psgrad
