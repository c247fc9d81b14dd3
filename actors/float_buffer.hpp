// A shared, immutable float buffer that CAF messages carry without copying inside a process and that
// crosses the network as one raw byte block (CAF 0.17 would otherwise write float by float and garble
// NaN/Inf).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "caf/binary_deserializer.hpp"
#include "caf/deserializer.hpp"
#include "caf/error.hpp"
#include "caf/meta/type_name.hpp"
#include "caf/sec.hpp"
#include "caf/serializer.hpp"
#include "model/aligned_floats.hpp"

namespace psgrad {

// 64-byte aligned like every buffer the model computes on, so a worker computes on a received buffer
// in place with the same summation order as on its own.
class FloatBuffer {
 public:
  FloatBuffer() = default;
  explicit FloatBuffer(std::shared_ptr<const AlignedFloats> values) : values_(std::move(values)) {}
  static FloatBuffer copy_of(const float* data, std::size_t size) {
    return FloatBuffer(std::make_shared<const AlignedFloats>(data, data + size));
  }

  std::size_t size() const { return values_ ? values_->size() : 0; }
  const float* data() const { return values_ ? values_->data() : nullptr; }
  bool empty() const { return size() == 0; }
  const AlignedFloats& values() const;
  // How many holders share the buffer (messages, actors): 0 for an empty buffer.
  long use_count() const { return values_.use_count(); }

  // Byte-exact equality (NaN payloads included).
  bool operator==(const FloatBuffer& other) const {
    return size() == other.size() && (size() == 0 || std::memcmp(data(), other.data(), size() * 4) == 0);
  }

 private:
  std::shared_ptr<const AlignedFloats> values_;
};

// The largest buffer a peer may send; a declared size beyond it is refused before any allocation.
constexpr std::uint64_t max_float_buffer_size = std::uint64_t{1} << 28;
// Guards against a peer with another float format or byte order.
constexpr std::uint32_t float_buffer_magic = 0x70734642;  // "psFB"

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, FloatBuffer& x) {
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value) {
    std::uint32_t magic = float_buffer_magic;
    std::uint64_t count = x.size();
    if (auto err = f(magic, count)) return err;
    if (count == 0) return caf::error{};
    return f.apply_raw(count * sizeof(float), const_cast<float*>(x.data()));
  } else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value) {
    std::uint32_t magic = 0;
    std::uint64_t count = 0;
    if (auto err = f(magic, count)) return err;
    if (magic != float_buffer_magic || count > max_float_buffer_size)
      return caf::make_error(caf::sec::invalid_argument, "float buffer header rejected");
    // A count the message cannot hold is refused before allocating, or a 28-byte message could make
    // the receiver allocate and zero 1 GiB. Only the binary deserializer (the network's) knows its size.
    if (auto* binary = dynamic_cast<caf::binary_deserializer*>(&f);
        binary && count * sizeof(float) > binary->remaining())
      return caf::make_error(caf::sec::end_of_stream, "float buffer larger than its message");
    auto values = std::make_shared<AlignedFloats>(count);
    if (count > 0)
      if (auto err = f.apply_raw(count * sizeof(float), values->data())) return err;
    x = FloatBuffer(std::move(values));
    return caf::error{};
  } else {
    auto count = static_cast<std::uint64_t>(x.size());
    return f(caf::meta::type_name("FloatBuffer"), count);
  }
}

// One float sent as its raw bits, for fields like Gradients::loss. CAF 0.17 encodes a lone float with
// its own pack754, which turns NaN into 1.0, garbles denormals and loops forever on infinity. For
// normal numbers both encodings are the same bytes, so peers built before this still agree.
struct RawFloat {
  float& value;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, RawFloat x) {
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value) {
    std::uint32_t bits;
    std::memcpy(&bits, &x.value, sizeof bits);
    return f(bits);
  } else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value) {
    std::uint32_t bits = 0;
    if (auto err = f(bits)) return err;
    std::memcpy(&x.value, &bits, sizeof bits);
    return caf::error{};
  } else {
    return f(x.value);
  }
}

// Reuses buffers nobody else holds any more, so steady-state training does not allocate.
class BufferPool {
 public:
  explicit BufferPool(std::size_t size) : size_(size) {}
  // A buffer of the pool's size that only the caller may write until it is shared.
  std::shared_ptr<AlignedFloats> acquire();
  std::size_t buffers_created() const { return buffers_.size(); }

 private:
  std::size_t size_;
  std::vector<std::shared_ptr<AlignedFloats>> buffers_;
};

}  // namespace psgrad
