// An in-memory classification data set: inputs and one-hot targets, shared read-only by a process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/aligned_floats.hpp"

namespace psgrad {

struct Dataset {
  std::size_t count = 0;
  std::size_t width = 0;        // features per example (rows * cols for images)
  std::size_t num_classes = 0;  // one-hot width
  std::size_t image_rows = 0;
  std::size_t image_cols = 0;
  AlignedFloats inputs;               // count x width, row-major, pixel bytes / 255
  AlignedFloats targets;              // count x num_classes, one-hot
  std::vector<std::uint8_t> labels;   // count
};

}  // namespace psgrad
