#include "actors/shard_state.hpp"

#include <fmt/format.h>

namespace psgrad {

OptimizerState slice_optimizer_state(const OptimizerState& whole, std::size_t total, std::size_t begin,
                                     std::size_t end) {
  OptimizerState slice;
  slice.counts = whole.counts;
  const std::size_t buffers = total == 0 ? 0 : whole.buffers.size() / total;
  for (std::size_t b = 0; b < buffers; ++b)
    slice.buffers.insert(slice.buffers.end(), whole.buffers.begin() + static_cast<std::ptrdiff_t>(b * total + begin),
                         whole.buffers.begin() + static_cast<std::ptrdiff_t>(b * total + end));
  return slice;
}

Result<ServerState> join_server_states(const std::vector<ServerState>& parts) {
  if (parts.empty()) return Error{"no shard states to join"};
  std::size_t total = 0;
  for (const auto& part : parts) total += part.weights.values.size();
  const auto& first = parts.front();
  const std::size_t first_size = first.weights.values.size();
  const std::size_t buffers = first_size == 0 ? 0 : first.optimizer.buffers.size() / first_size;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const auto& part = parts[i];
    if (part.weights.version != first.weights.version || part.optimizer.counts != first.optimizer.counts ||
        part.optimizer.buffers.size() != buffers * part.weights.values.size())
      return Error{fmt::format("shard {} is at step {} and shard 0 at step {}, or their optimizer states differ in "
                               "shape", i, part.weights.version, first.weights.version)};
  }
  ServerState whole;
  whole.weights.version = first.weights.version;
  whole.weights.layout_hash = first.weights.layout_hash;
  auto weights = std::make_shared<AlignedFloats>();
  weights->reserve(total);
  for (const auto& part : parts)
    weights->insert(weights->end(), part.weights.values.data(), part.weights.values.data() + part.weights.values.size());
  whole.weights.values = FloatBuffer(std::move(weights));
  whole.optimizer.counts = first.optimizer.counts;
  whole.optimizer.buffers.reserve(buffers * total);
  for (std::size_t b = 0; b < buffers; ++b)
    for (const auto& part : parts) {
      const std::size_t size = part.weights.values.size();
      whole.optimizer.buffers.insert(whole.optimizer.buffers.end(),
                                     part.optimizer.buffers.begin() + static_cast<std::ptrdiff_t>(b * size),
                                     part.optimizer.buffers.begin() + static_cast<std::ptrdiff_t>((b + 1) * size));
    }
  return whole;
}

}  // namespace psgrad
