#include "model/gradient_compressor.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "model/finite.hpp"

namespace psgrad {

TopKCompressor::TopKCompressor(const ParameterLayout& layout, double fraction)
    : layout_(layout), residual_(layout.total_size(), 0.0f) {
  std::size_t largest = 0;
  for (const auto& array : layout.arrays()) {
    const auto k = static_cast<std::size_t>(std::ceil(fraction * static_cast<double>(array.size())));
    keep_.push_back(std::clamp<std::size_t>(k, 1, std::max<std::size_t>(1, array.size())));
    largest = std::max(largest, array.size());
  }
  magnitudes_.reserve(largest);
}

std::size_t TopKCompressor::kept_total() const {
  std::size_t total = 0;
  for (std::size_t a = 0; a < keep_.size(); ++a) total += std::min(keep_[a], layout_[a].size());
  return total;
}

void TopKCompressor::compress(float* gradient) {
  for (std::size_t a = 0; a < layout_.array_count(); ++a) {
    const auto& array = layout_[a];
    float* g = gradient + array.offset;
    float* r = residual_.data() + array.offset;
    const std::size_t size = array.size();
    for (std::size_t i = 0; i < size; ++i) g[i] += r[i];
    const std::size_t k = keep_[a];
    // Selection needs an ordering, which NaN breaks; the server refuses such a gradient anyway.
    if (k >= size || !all_finite(g, size)) {
      std::fill(r, r + size, 0.0f);
      continue;
    }
    magnitudes_.resize(size);
    for (std::size_t i = 0; i < size; ++i) magnitudes_[i] = std::fabs(g[i]);
    std::nth_element(magnitudes_.begin(), magnitudes_.begin() + static_cast<std::ptrdiff_t>(k - 1),
                     magnitudes_.end(), std::greater<float>());
    const float threshold = magnitudes_[k - 1];
    std::size_t above = 0;
    for (std::size_t i = 0; i < size; ++i) above += std::fabs(g[i]) > threshold ? 1 : 0;
    std::size_t ties = k - above;  // entries equal to the threshold still to keep, first ones first
    for (std::size_t i = 0; i < size; ++i) {
      const float m = std::fabs(g[i]);
      const bool keep = m > threshold || (m == threshold && ties > 0 && ties-- > 0);
      r[i] = keep ? 0.0f : g[i];
      g[i] = keep ? g[i] : 0.0f;
    }
  }
}

}  // namespace psgrad
