// Whether a shard's float range [begin, end) cuts through a parameter array of the layout.
#pragma once

#include <cstddef>

#include "model/parameter_layout.hpp"

namespace psgrad {

inline bool cuts_an_array(const ParameterLayout& layout, std::size_t begin, std::size_t end) {
  for (const auto& array : layout.arrays())
    if ((array.offset < begin && array.offset + array.size() > begin) ||
        (array.offset < end && array.offset + array.size() > end))
      return true;
  return false;
}

}  // namespace psgrad
