// Rows of a sparse table by key: sorted unique keys and one row-major block of rows in the same order.
// What a worker pulls (a batch's rows) and what it pushes back (their gradients).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace psgrad {

struct SparseRows {
  std::vector<std::uint64_t> keys;  // sorted, unique
  std::size_t width = 0;
  std::vector<float> values;  // keys.size() * width floats; row i belongs to keys[i]

  SparseRows() = default;
  SparseRows(std::vector<std::uint64_t> sorted_keys, std::size_t row_width)
      : keys(std::move(sorted_keys)), width(row_width), values(keys.size() * row_width, 0.0f) {}

  std::size_t size() const { return keys.size(); }
  float* row(std::size_t i) { return values.data() + i * width; }
  const float* row(std::size_t i) const { return values.data() + i * width; }
};

}  // namespace psgrad
