#include "actors/server_group.hpp"

#include <algorithm>

namespace psgrad {

Weights ServerGroup::SliceJoiner::join(const std::vector<Weights>& parts) {
  // A slice that arrived refused (payloads/float_buffer.hpp) makes the whole refused.
  for (const auto& part : parts)
    if (part.values.refused()) return part;
  std::size_t total = 0;
  for (const auto& part : parts) total += part.values.size();
  if (!pool_) pool_ = std::make_unique<BufferPool>(total);
  auto joined = pool_->acquire();
  std::size_t offset = 0;
  for (const auto& part : parts) {
    std::copy(part.values.data(), part.values.data() + part.values.size(), joined->data() + offset);
    offset += part.values.size();
  }
  return Weights{parts[0].version, parts[0].layout_hash, FloatBuffer(std::move(joined), parts[0].values.encoding())};
}

}  // namespace psgrad
