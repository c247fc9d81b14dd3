#include "model/norm_chunks.hpp"

#include <algorithm>

namespace psgrad {

std::vector<NormChunk> norm_chunks(const ParameterLayout& layout, std::size_t begin, std::size_t end) {
  std::vector<NormChunk> chunks;
  for (std::size_t a = 0; a < layout.array_count(); ++a) {
    const auto& array = layout[a];
    if (array.offset + array.size() <= begin || array.offset >= end) continue;
    for (std::size_t from = 0; from < array.size(); from += norm_chunk_size) {
      const std::size_t at = array.offset + from;
      chunks.push_back(NormChunk{a, at, std::min(norm_chunk_size, array.size() - from), at >= begin && at < end});
    }
  }
  return chunks;
}

bool on_norm_grid(const ParameterLayout& layout, std::size_t cut) {
  if (cut == layout.total_size()) return true;
  for (const auto& array : layout.arrays())
    if (cut >= array.offset && cut < array.offset + array.size()) return (cut - array.offset) % norm_chunk_size == 0;
  return false;
}

}  // namespace psgrad
