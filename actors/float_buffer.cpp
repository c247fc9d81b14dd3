#include "actors/float_buffer.hpp"

namespace psgrad {

const AlignedFloats& FloatBuffer::values() const {
  static const AlignedFloats empty;
  return values_ ? *values_ : empty;
}

std::shared_ptr<AlignedFloats> BufferPool::acquire() {
  // use_count() == 1: only the pool holds it. Other holders can only let go concurrently, so a stale
  // count can only make us skip a free buffer, never hand out a busy one.
  for (auto& buffer : buffers_)
    if (buffer.use_count() == 1) return buffer;
  buffers_.push_back(std::make_shared<AlignedFloats>(size_));
  return buffers_.back();
}

}  // namespace psgrad
