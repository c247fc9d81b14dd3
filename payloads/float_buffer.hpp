// A shared, immutable float buffer that CAF messages carry without copying inside a process and that
// crosses the network as one raw byte block (CAF 0.17 would otherwise write float by float and garble
// NaN/Inf): fp32 values, bf16 values or index-value pairs, as its wire encoding says.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "caf/binary_deserializer.hpp"
#include "caf/deserializer.hpp"
#include "caf/error.hpp"
#include "caf/meta/type_name.hpp"
#include "caf/sec.hpp"
#include "caf/serializer.hpp"
#include "payloads/payload_checksum.hpp"
#include "payloads/shared_memory.hpp"
#include "model/aligned_floats.hpp"
#include "model/buffer_pool.hpp"
#include "model/bf16.hpp"
#include "model/wire_encoding.hpp"

namespace psgrad {

// Why a payload that arrived could not be taken: how it came ("shared-memory", "top-k") and what was
// wrong with it ("failed its checksum ...").
struct PayloadRefusal {
  std::string route;
  std::string problem;
};

// 64-byte aligned like every buffer the model computes on, so a worker computes on a received buffer
// in place with the same summation order as on its own. In a process the values are always plain
// floats; the encoding says how they cross the network, and holds only for values that fit it
// (bf16: every value a bf16 one; topk: any, mostly zeros, sent as the nonzero entries). A buffer may
// be a slice of another (what a server shard receives): it shares the floats in this process, and only
// its own floats cross the network, arriving as a buffer of their own. A handle marked for shared
// memory (a peer on this host, payloads/shared_memory.hpp) sends its floats through a slot of it instead.
// A payload that arrives but cannot be taken (its slot failed its checksum, its entries are garbled)
// arrives as a refused buffer with no floats, so the receiver can name its sender and drop it rather
// than the message vanishing inside CAF.
class FloatBuffer {
 public:
  FloatBuffer() = default;
  explicit FloatBuffer(const std::shared_ptr<const AlignedFloats>& values, WireEncoding encoding = WireEncoding::fp32)
      : values_(values, values ? values->data() : nullptr), size_(values ? values->size() : 0), encoding_(encoding) {}
  // Floats held by something else than an AlignedFloats: a slot of shared memory written in place.
  FloatBuffer(std::shared_ptr<const float> floats, std::size_t size) : values_(std::move(floats)), size_(size) {}
  static FloatBuffer copy_of(const float* data, std::size_t size) {
    return FloatBuffer(std::make_shared<const AlignedFloats>(data, data + size));
  }

  // Floats [begin, end) of this buffer, without a copy; same encoding. Requires begin <= end <= size().
  FloatBuffer slice(std::size_t begin, std::size_t end) const {
    FloatBuffer part = *this;
    part.offset_ = offset_ + begin;
    part.size_ = end - begin;
    part.checksum_.reset();
    return part;
  }

  // Refused on arrival: `route` and `problem` as in PayloadRefusal.
  static FloatBuffer refused(std::string route, std::string problem) {
    FloatBuffer refused;
    refused.refusal_ = std::make_shared<const PayloadRefusal>(PayloadRefusal{std::move(route), std::move(problem)});
    return refused;
  }
  bool refused() const { return refusal_ != nullptr; }
  // What the receiver says of a refused payload, calling it `noun`: "shared-memory gradient failed its
  // checksum (...)". Empty when it was not refused.
  std::string refusal(std::string_view noun) const;

  // This handle with its floats' checksum taken now. A payload computed in a slot of shared memory
  // takes it as soon as it is complete, so its bytes are vouched for from then on, not only from when
  // its message leaves (after a simulated delay, say); sent, the reference carries it.
  FloatBuffer with_checksum() const {
    FloatBuffer checked = *this;
    checked.checksum_ = payload_checksum(data(), size() * sizeof(float));
    return checked;
  }
  // The checksum a reference to these floats carries: the one taken above, else one taken now.
  std::uint64_t checksum() const { return checksum_ ? *checksum_ : payload_checksum(data(), size() * sizeof(float)); }

  std::size_t size() const { return size_; }
  const float* data() const { return values_ ? values_.get() + offset_ : nullptr; }
  bool empty() const { return size() == 0; }
  // How many holders share the buffer (messages, actors, slices): 0 for an empty buffer.
  long use_count() const { return values_.use_count(); }
  WireEncoding encoding() const { return encoding_; }

  // This handle, marked to cross to its receiver through this host's shared memory (as plain floats,
  // whatever the encoding: the values already fit it) or, unmarked, over the network as encoded.
  FloatBuffer through_shared_memory(bool marked = true) const {
    FloatBuffer marked_copy = *this;
    marked_copy.through_shared_memory_ = marked;
    return marked_copy;
  }
  bool marked_for_shared_memory() const { return through_shared_memory_; }
  // It came through shared memory: its sender is on this host and can take an answer the same way.
  bool arrived_through_shared_memory() const { return arrived_through_shared_memory_; }

  // Byte-exact equality (NaN payloads included).
  bool operator==(const FloatBuffer& other) const {
    return size() == other.size() && (size() == 0 || std::memcmp(data(), other.data(), size() * 4) == 0);
  }

 private:
  // The first float; it shares ownership with what holds them (an AlignedFloats, or a slot of another
  // process's shared memory that is freed when the last holder lets go).
  std::shared_ptr<const float> values_;
  std::size_t offset_ = 0;  // of a slice, in values_
  std::size_t size_ = 0;
  WireEncoding encoding_ = WireEncoding::fp32;
  bool through_shared_memory_ = false;
  bool arrived_through_shared_memory_ = false;
  std::optional<std::uint64_t> checksum_;  // taken by with_checksum
  std::shared_ptr<const PayloadRefusal> refusal_;

  template <class Deserializer>
  friend caf::error read_shared(Deserializer& f, FloatBuffer& x, std::uint64_t count);
};

// The largest buffer a peer may send; a declared size beyond it is refused before any allocation.
constexpr std::uint64_t max_float_buffer_size = std::uint64_t{1} << 28;

// The largest buffer this process takes: max_float_buffer_size until a process that serves or joins a
// run sets it to its model's parameter count (no payload of a run is larger). A top-k header of a few
// bytes names a dense size the receiver must allocate, so without it one forged message could cost a
// gibibyte.
void limit_payload_floats(std::uint64_t floats);
std::uint64_t payload_floats_limit();

// Guard against a peer with another float format or byte order, and say how the values follow.
constexpr std::uint32_t float_buffer_magic = 0x70734642;   // "psFB": count fp32 values
constexpr std::uint32_t bf16_buffer_magic = 0x70734648;    // "psFH": count bf16 values (2 bytes each)
constexpr std::uint32_t sparse_buffer_magic = 0x70734653;  // "psFS": entries, their uint32 indices, fp32 values
constexpr std::uint32_t shared_buffer_magic = 0x7073464d;  // "psFM": count fp32 values in a slot of shared memory

// The bytes a buffer takes on the wire, header included (what the inspect below writes).
std::uint64_t wire_bytes(const FloatBuffer& buffer);

// A buffer of `count` floats for a payload arriving from another process, reused once nobody holds it
// any more: a fresh 0.5 MB allocation each time would be fresh pages, faulted in and cleared by the
// kernel for every message. Its contents are whatever it held last.
std::shared_ptr<AlignedFloats> received_buffer(std::size_t count);

namespace wire_detail {

// Indices and values of the entries whose bits are not all zero (so -0.0 and NaN are kept), in order.
void nonzero_entries(const FloatBuffer& buffer, std::vector<std::uint32_t>& indices, std::vector<float>& values);

// A thread's buffer for bf16 bits on their way to or from the wire, grown to the largest payload
// once: (de)serializing then neither allocates nor zero-fills.
inline std::vector<std::uint16_t>& bf16_scratch(std::size_t count) {
  thread_local std::vector<std::uint16_t> scratch;
  if (scratch.size() < count) scratch.resize(count);
  return scratch;
}

template <class Inspector>
caf::error inspect_reference(Inspector& f, std::uint8_t& encoding, SharedMemoryReference& where) {
  return f(encoding, where.pid, where.fd, where.key, where.slot, where.sequence, where.checksum);
}

template <class Serializer>
caf::error write(Serializer& f, const FloatBuffer& x) {
  std::uint64_t count = x.size();
  if (count > 0 && x.marked_for_shared_memory()) {
    // No free slot (the receiver is behind, or gone): the bytes go inline as usual.
    if (auto where = put_in_shared_memory(x.data(), count * sizeof(float))) {
      where->checksum = x.checksum();
      std::uint32_t magic = shared_buffer_magic;
      auto encoding = static_cast<std::uint8_t>(x.encoding());
      if (auto err = f(magic, count)) return err;
      return inspect_reference(f, encoding, *where);
    }
  }
  switch (count == 0 ? WireEncoding::fp32 : x.encoding()) {
    case WireEncoding::fp32: {
      std::uint32_t magic = float_buffer_magic;
      if (auto err = f(magic, count)) return err;
      if (count == 0) return caf::error{};
      return f.apply_raw(count * sizeof(float), const_cast<float*>(x.data()));
    }
    case WireEncoding::bf16: {
      std::uint32_t magic = bf16_buffer_magic;
      if (auto err = f(magic, count)) return err;
      auto& halves = bf16_scratch(count);
      to_bf16_bits(x.data(), halves.data(), count);
      return f.apply_raw(count * sizeof(std::uint16_t), halves.data());
    }
    case WireEncoding::topk: {
      std::uint32_t magic = sparse_buffer_magic;
      std::vector<std::uint32_t> indices;
      std::vector<float> values;
      nonzero_entries(x, indices, values);
      std::uint64_t entries = indices.size();
      if (auto err = f(magic, count, entries)) return err;
      if (entries == 0) return caf::error{};
      if (auto err = f.apply_raw(entries * sizeof(std::uint32_t), indices.data())) return err;
      return f.apply_raw(entries * sizeof(float), values.data());
    }
  }
  return caf::make_error(caf::sec::invalid_argument, "unknown wire encoding");
}

// A size the message cannot hold is refused before allocating, or a 28-byte message could make the
// receiver allocate and zero 1 GiB. Only the binary deserializer (the network's) knows its size.
template <class Deserializer>
bool fits_message(Deserializer& f, std::uint64_t bytes) {
  auto* binary = dynamic_cast<caf::binary_deserializer*>(&f);
  return !binary || bytes <= binary->remaining();
}

}  // namespace wire_detail

// The floats stay in the sender's slot, read in place; the slot is the sender's again once the last
// copy of this buffer is gone. The slot is a file other processes of the user can write, so a
// reference that cannot be taken, or whose bytes fail its checksum, arrives refused.
template <class Deserializer>
caf::error read_shared(Deserializer& f, FloatBuffer& x, std::uint64_t count) {
  std::uint8_t encoding = 0;
  SharedMemoryReference where;
  if (auto err = wire_detail::inspect_reference(f, encoding, where)) return err;
  constexpr const char* route = "shared-memory";
  if (count == 0 || count > payload_floats_limit() || encoding > static_cast<std::uint8_t>(WireEncoding::topk)) {
    x = FloatBuffer::refused(route, fmt::format("was refused: its reference names {} floats of encoding {}, where "
                                                "1 to {} floats of encoding 0 to 2 fit",
                                                count, encoding, payload_floats_limit()));
    return caf::error{};
  }
  const std::size_t bytes = count * sizeof(float);
  auto held = hold_in_shared_memory(where, bytes);
  if (auto* refused = std::get_if<std::string>(&held)) {
    x = FloatBuffer::refused(route, "was refused: " + *refused);
    return caf::error{};
  }
  const auto& slot = std::get<std::shared_ptr<const void>>(held);
  if (payload_checksum(slot.get(), bytes) != where.checksum) {
    x = FloatBuffer::refused(route, "failed its checksum (its bytes were changed after its sender wrote them)");
    return caf::error{};  // the slot is let go with `held`
  }
  x = FloatBuffer();
  x.values_ = std::shared_ptr<const float>(slot, static_cast<const float*>(slot.get()));
  x.size_ = count;
  x.encoding_ = static_cast<WireEncoding>(encoding);
  x.arrived_through_shared_memory_ = true;
  return caf::error{};
}

namespace wire_detail {

inline const char* route_of(std::uint32_t magic) {
  return magic == bf16_buffer_magic ? "bf16" : magic == sparse_buffer_magic ? "top-k" : "";
}

// A payload whose `bytes` follow in the message but that cannot be taken: they are skipped and it
// arrives refused, so the rest of the message still reads. Without them in the message (or without a
// binary deserializer to skip them) the message cannot be read past it: an error.
template <class Deserializer>
caf::error refuse_and_skip(Deserializer& f, FloatBuffer& x, std::uint64_t bytes, std::uint32_t magic,
                           std::string problem) {
  auto* binary = dynamic_cast<caf::binary_deserializer*>(&f);
  if (binary == nullptr || bytes > binary->remaining())
    return caf::make_error(caf::sec::invalid_argument, "float buffer header rejected");
  binary->skip(bytes);
  x = FloatBuffer::refused(route_of(magic), std::move(problem));
  return caf::error{};
}

inline std::string too_many_floats(std::uint64_t count) {
  return fmt::format("was refused: it names {} floats, more than the {} of this run's model", count,
                     payload_floats_limit());
}

template <class Deserializer>
caf::error read(Deserializer& f, FloatBuffer& x) {
  std::uint32_t magic = 0;
  std::uint64_t count = 0;
  if (auto err = f(magic, count)) return err;
  if (magic == shared_buffer_magic) return read_shared(f, x, count);
  const bool known = magic == float_buffer_magic || magic == bf16_buffer_magic || magic == sparse_buffer_magic;
  // An empty buffer is always written as fp32: one spelling per payload, so decoding and encoding
  // again gives the same bytes. Beyond the cap no payload of any run goes: nothing to skip to.
  if (!known || count > max_float_buffer_size || (count == 0 && magic != float_buffer_magic))
    return caf::make_error(caf::sec::invalid_argument, "float buffer header rejected");
  if (magic == float_buffer_magic || magic == bf16_buffer_magic) {
    const bool halves = magic == bf16_buffer_magic;
    if (!fits_message(f, count * (halves ? 2 : 4)))
      return caf::make_error(caf::sec::end_of_stream, "float buffer larger than its message");
    // Larger than this run's model: refused before anything is allocated.
    if (count > payload_floats_limit())
      return refuse_and_skip(f, x, count * (halves ? 2 : 4), magic, too_many_floats(count));
    // From the network's bytes straight into a reused buffer.
    auto* binary = dynamic_cast<caf::binary_deserializer*>(&f);
    if (binary != nullptr && count > 0 && !halves) {
      auto values = received_buffer(count);
      std::memcpy(values->data(), binary->remainder().data(), count * sizeof(float));
      x = FloatBuffer(std::move(values), WireEncoding::fp32);
      binary->skip(count * sizeof(float));
      return caf::error{};
    }
    auto values = std::make_shared<AlignedFloats>(count);
    if (count > 0 && !halves)
      if (auto err = f.apply_raw(count * sizeof(float), values->data())) return err;
    if (count > 0 && halves) {
      auto& bits = bf16_scratch(count);
      if (auto err = f.apply_raw(count * sizeof(std::uint16_t), bits.data())) return err;
      from_bf16_bits(bits.data(), values->data(), count);
    }
    x = FloatBuffer(std::move(values), halves ? WireEncoding::bf16 : WireEncoding::fp32);
    return caf::error{};
  }
  std::uint64_t entries = 0;
  if (auto err = f(entries)) return err;
  if (entries > count || !fits_message(f, entries * 8))
    return caf::make_error(caf::sec::invalid_argument, "sparse float buffer header rejected");
  // A few header bytes could otherwise name a dense size far beyond the model to allocate.
  if (count > payload_floats_limit()) return refuse_and_skip(f, x, entries * 8, magic, too_many_floats(count));
  std::vector<std::uint32_t> indices(entries);
  std::vector<float> nonzero(entries);
  if (entries > 0) {
    if (auto err = f.apply_raw(entries * sizeof(std::uint32_t), indices.data())) return err;
    if (auto err = f.apply_raw(entries * sizeof(float), nonzero.data())) return err;
  }
  // Only the one spelling the sender writes is accepted: increasing indices, no zero entries.
  auto values = std::make_shared<AlignedFloats>(count, 0.0f);
  for (std::size_t e = 0; e < entries; ++e) {
    std::uint32_t bits;
    std::memcpy(&bits, &nonzero[e], sizeof bits);
    if (indices[e] >= count || (e > 0 && indices[e] <= indices[e - 1]) || bits == 0) {
      x = FloatBuffer::refused(route_of(magic),
                               fmt::format("was refused: its entry {} (index {}, of {} floats) is out of order, "
                                           "out of range or zero",
                                           e, indices[e], count));
      return caf::error{};
    }
    (*values)[indices[e]] = nonzero[e];
  }
  x = FloatBuffer(std::move(values), WireEncoding::topk);
  return caf::error{};
}

}  // namespace wire_detail

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, FloatBuffer& x) {
  if constexpr (std::is_base_of<caf::serializer, Inspector>::value) {
    return wire_detail::write(f, x);
  } else if constexpr (std::is_base_of<caf::deserializer, Inspector>::value) {
    return wire_detail::read(f, x);
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

}  // namespace psgrad
