// Where a worker computes each gradient it sends: in the shared memory slot it is sent from (fp32 to a
// server process on this host), else in a pooled buffer then encoded for the wire (bf16 rounding, top-k).
#pragma once

#include <cstddef>
#include <memory>

#include "model/buffer_pool.hpp"
#include "model/parameter_layout.hpp"
#include "payloads/float_buffer.hpp"
#include "payloads/shared_memory.hpp"
#include "payloads/wire_encoder.hpp"

namespace psgrad {

class GradientOutbox {
 public:
  GradientOutbox(WireEncoding wire, const ParameterLayout& layout, double topk_fraction)
      : wire_(wire), size_(layout.total_size()), pool_(size_), encoder_(wire, layout, topk_fraction) {}

  // The buffer to compute the next gradient in; `to_shared_memory`: its first server is a process on this host.
  float* open(bool to_shared_memory) {
    slot_ = wire_ == WireEncoding::fp32 && to_shared_memory ? reserve_in_shared_memory(size_ * sizeof(float)) : nullptr;
    buffer_ = slot_ ? nullptr : pool_.acquire();
    return slot_ ? static_cast<float*>(slot_.get()) : buffer_->data();
  }

  // The computed gradient as it is sent. Sent whole from a slot (`whole`: one server), its checksum is taken
  // now, so the bytes are vouched for from here on (payload_checksum.hpp); slices for shards take theirs as
  // they are sent.
  FloatBuffer seal(bool whole) {
    if (!slot_) return encoder_.encode(std::move(buffer_));
    auto slot = std::move(slot_);
    FloatBuffer values(std::shared_ptr<const float>(slot, static_cast<const float*>(slot.get())), size_);
    return whole ? values.with_checksum() : values;
  }

 private:
  WireEncoding wire_;
  std::size_t size_;
  BufferPool pool_;
  GradientEncoder encoder_;  // cluster.wire: the gradient as it is sent (topk: with this worker's residual)
  std::shared_ptr<void> slot_;
  std::shared_ptr<AlignedFloats> buffer_;
};

}  // namespace psgrad
