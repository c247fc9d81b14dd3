// Whether a shard's float range [begin, end) cuts through a parameter array of the layout, and whether
// an optimizer may own that range.
#pragma once

#include <cstddef>

#include "model/norm_chunks.hpp"
#include "model/parameter_layout.hpp"

namespace psgrad {

inline bool cuts_an_array(const ParameterLayout& layout, std::size_t begin, std::size_t end) {
  for (const auto& array : layout.arrays())
    if ((array.offset < begin && array.offset + array.size() > begin) ||
        (array.offset < end && array.offset + array.size() > end))
      return true;
  return false;
}

// A range an optimizer may be restricted to: inside the layout, cut on the clip norms' chunk grid,
// and, with coupled L2 (the weights go into the clip norm, and another shard's are not here), not
// through an array.
inline bool valid_shard_range(const ParameterLayout& layout, std::size_t begin, std::size_t end, bool coupled_l2) {
  if (begin >= end || end > layout.total_size()) return false;
  if (!on_norm_grid(layout, begin) || !on_norm_grid(layout, end)) return false;
  return !(coupled_l2 && cuts_an_array(layout, begin, end));
}

}  // namespace psgrad
