// An in-memory classification data set: inputs and one-hot targets, shared read-only by a process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "model/aligned_floats.hpp"

namespace psgrad {

struct Dataset {
  std::size_t count = 0;
  std::size_t width = 0;        // features per example (rows * cols for images)
  std::size_t num_classes = 0;  // one-hot width
  std::size_t image_rows = 0;
  std::size_t image_cols = 0;
  AlignedFloats inputs;               // count x width, row-major, pixel bytes / 255; empty when borrowed
  AlignedFloats targets;              // count x num_classes, one-hot
  std::vector<std::uint8_t> labels;   // count
  // Inputs that stay in their owner's memory (a caller's array, count x width floats, row-major, any
  // alignment), kept alive by borrowed_owner: a large training set is then never copied.
  const float* borrowed_inputs = nullptr;
  std::shared_ptr<const void> borrowed_owner;

  const float* input_data() const { return borrowed_inputs ? borrowed_inputs : inputs.data(); }
  std::size_t input_size() const { return borrowed_inputs ? count * width : inputs.size(); }
};

// An image byte as an input, as every IDX reader scales it.
inline float pixel_value(std::uint8_t byte) { return static_cast<float>(byte) / 255.0f; }

}  // namespace psgrad
