#include "payloads/float_buffer.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

namespace psgrad {

std::string FloatBuffer::refusal(std::string_view noun) const {
  if (!refusal_) return {};
  return refusal_->route.empty() ? fmt::format("{} {}", noun, refusal_->problem)
                                 : fmt::format("{} {} {}", refusal_->route, noun, refusal_->problem);
}

namespace wire_detail {

void nonzero_entries(const FloatBuffer& buffer, std::vector<std::uint32_t>& indices, std::vector<float>& values) {
  indices.clear();
  values.clear();
  const float* data = buffer.data();
  for (std::size_t i = 0; i < buffer.size(); ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &data[i], sizeof bits);
    if (bits == 0) continue;
    indices.push_back(static_cast<std::uint32_t>(i));
    values.push_back(data[i]);
  }
}

}  // namespace wire_detail

namespace {
std::atomic<std::uint64_t> largest_payload{max_float_buffer_size};
}  // namespace

void limit_payload_floats(std::uint64_t floats) {
  largest_payload.store(std::min(std::max<std::uint64_t>(floats, 1), max_float_buffer_size));
}
std::uint64_t payload_floats_limit() { return largest_payload.load(); }

std::uint64_t wire_bytes(const FloatBuffer& buffer) {
  const std::uint64_t header = 4 + 8;  // magic, count
  if (buffer.empty()) return header;
  switch (buffer.encoding()) {
    case WireEncoding::fp32: return header + buffer.size() * 4;
    case WireEncoding::bf16: return header + buffer.size() * 2;
    case WireEncoding::topk: {
      std::uint64_t entries = 0;
      const float* data = buffer.data();
      for (std::size_t i = 0; i < buffer.size(); ++i) {
        std::uint32_t bits;
        std::memcpy(&bits, &data[i], sizeof bits);
        entries += bits != 0 ? 1 : 0;
      }
      return header + 8 + entries * 8;
    }
  }
  return header;
}

std::shared_ptr<AlignedFloats> received_buffer(std::size_t count) {
  // Shared by the threads that deserialize (CAF's BASP workers); a run receives a few sizes only.
  static std::mutex mutex;
  static std::vector<std::shared_ptr<AlignedFloats>> kept;
  constexpr std::size_t most_kept = 64;
  std::lock_guard<std::mutex> lock(mutex);
  for (auto& buffer : kept)
    if (buffer.use_count() == 1 && buffer->size() == count) return buffer;
  auto fresh = std::make_shared<AlignedFloats>(count);
  if (kept.size() < most_kept) kept.push_back(fresh);
  return fresh;
}

}  // namespace psgrad
