#include "model/norm_chunks.hpp"

#include <algorithm>

#include "model/gradient_clip.hpp"
#include "model/gradient_sum.hpp"

namespace psgrad {

std::vector<NormChunk> norm_chunks(const ParameterLayout& layout, std::size_t begin, std::size_t end) {
  std::vector<NormChunk> chunks;
  std::size_t foreign = 0;
  for (std::size_t a = 0; a < layout.array_count(); ++a) {
    const auto& array = layout[a];
    if (array.offset + array.size() <= begin || array.offset >= end) continue;
    for (std::size_t from = 0; from < array.size(); from += norm_chunk_size) {
      const std::size_t at = array.offset + from;
      const bool owned = at >= begin && at < end;
      chunks.push_back(NormChunk{a, at, std::min(norm_chunk_size, array.size() - from), owned, owned ? 0 : foreign});
      if (!owned) ++foreign;
    }
  }
  return chunks;
}

std::vector<GradientRange> foreign_ranges(const std::vector<NormChunk>& chunks) {
  std::vector<GradientRange> ranges;
  for (const auto& chunk : chunks)
    if (!chunk.owned) ranges.push_back(GradientRange{chunk.begin, chunk.size});
  return ranges;
}

bool on_norm_grid(const ParameterLayout& layout, std::size_t cut) {
  if (cut == layout.total_size()) return true;
  for (const auto& array : layout.arrays())
    if (cut >= array.offset && cut < array.offset + array.size()) return (cut - array.offset) % norm_chunk_size == 0;
  return false;
}

double range_squares(const float* const* gradients, std::size_t count, std::size_t offset, std::size_t size,
                     float* scratch) {
  // sum_gradients' squares are sum_of_squares' lanes, so one gradient needs no copy.
  if (count == 1) return sum_of_squares(gradients[0] + offset, size);
  return sum_gradients(scratch, gradients, count, offset, size);
}

}  // namespace psgrad
