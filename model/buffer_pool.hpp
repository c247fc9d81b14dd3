// Float buffers handed out again once nobody else holds them: a steady path allocates none per step.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "model/aligned_floats.hpp"

namespace psgrad {

class BufferPool {
 public:
  explicit BufferPool(std::size_t size) : size_(size) {}
  // A buffer of the pool's size that only the caller may write until it is shared.
  std::shared_ptr<AlignedFloats> acquire() {
    // use_count() == 1: only the pool holds it. Other holders can only let go concurrently, so a stale
    // count can only make us skip a free buffer, never hand out a busy one.
    for (auto& buffer : buffers_)
      if (buffer.use_count() == 1) return buffer;
    buffers_.push_back(std::make_shared<AlignedFloats>(size_));
    return buffers_.back();
  }
  std::size_t buffers_created() const { return buffers_.size(); }

 private:
  std::size_t size_;
  std::vector<std::shared_ptr<AlignedFloats>> buffers_;
};

}  // namespace psgrad
