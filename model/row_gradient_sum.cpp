#include "model/row_gradient_sum.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>

#include <fmt/format.h>

namespace psgrad {

SparseRows sum_row_gradients(const std::vector<const SparseRows*>& in_worker_order) {
  if (in_worker_order.empty()) return SparseRows();
  const std::size_t width = in_worker_order.front()->width;
  std::vector<std::uint64_t> keys;
  for (const auto* gradient : in_worker_order) {
    if (gradient->width != width || gradient->values.size() != gradient->keys.size() * width)
      throw std::invalid_argument(fmt::format("sum_row_gradients: a gradient of {} floats for {} keys of width {}, "
                                              "the first is of width {}",
                                              gradient->values.size(), gradient->keys.size(), gradient->width, width));
    if (std::adjacent_find(gradient->keys.begin(), gradient->keys.end(), std::greater_equal<std::uint64_t>()) !=
        gradient->keys.end())
      throw std::invalid_argument("sum_row_gradients: a gradient's keys are not sorted and unique");
    keys.insert(keys.end(), gradient->keys.begin(), gradient->keys.end());
  }
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  SparseRows sum(std::move(keys), width);
  std::vector<bool> started(sum.size(), false);
  for (const auto* gradient : in_worker_order) {
    // Both key lists are sorted: one walk finds each of this gradient's keys in the sum.
    std::size_t at = 0;
    for (std::size_t i = 0; i < gradient->size(); ++i) {
      while (sum.keys[at] != gradient->keys[i]) ++at;
      float* out = sum.row(at);
      const float* row = gradient->row(i);
      if (!started[at]) std::copy(row, row + width, out);
      else
        for (std::size_t j = 0; j < width; ++j) out[j] += row[j];
      started[at] = true;
    }
  }
  return sum;
}

}  // namespace psgrad
