#include "model/pooling.hpp"

#include <algorithm>

namespace psgrad {

namespace {

// Thinc's scale: 1/length in double, then stored in the float type of the rows.
float mean_scale(std::size_t length) { return static_cast<float>(1.0 / static_cast<double>(length)); }

}  // namespace

std::optional<Pooling> pooling_named(const std::string& name) {
  if (name == "sum") return Pooling::sum;
  if (name == "mean") return Pooling::mean;
  return std::nullopt;
}

const char* pooling_name(Pooling pooling) { return pooling == Pooling::sum ? "sum" : "mean"; }

void pool(Pooling pooling, const float* rows, const std::vector<std::size_t>& offsets, std::size_t width,
          float* output, std::size_t output_stride) {
  for (std::size_t e = 0; e + 1 < offsets.size(); ++e) {
    float* out = output + e * output_stride;
    std::fill(out, out + width, 0.0f);
    const std::size_t length = offsets[e + 1] - offsets[e];
    if (length == 0) continue;
    const float scale = pooling == Pooling::mean ? mean_scale(length) : 1.0f;
    for (std::size_t t = offsets[e]; t < offsets[e + 1]; ++t) {
      const float* row = rows + t * width;
      if (pooling == Pooling::mean) {
        for (std::size_t i = 0; i < width; ++i) out[i] += scale * row[i];
      } else {
        for (std::size_t i = 0; i < width; ++i) out[i] += row[i];
      }
    }
  }
}

void pool_backward(Pooling pooling, const float* d_output, std::size_t d_stride,
                   const std::vector<std::size_t>& offsets, std::size_t width, float* d_rows) {
  for (std::size_t e = 0; e + 1 < offsets.size(); ++e) {
    const float* d_out = d_output + e * d_stride;
    const std::size_t length = offsets[e + 1] - offsets[e];
    const float scale = pooling == Pooling::mean && length > 0 ? mean_scale(length) : 1.0f;
    for (std::size_t t = offsets[e]; t < offsets[e + 1]; ++t) {
      float* d_row = d_rows + t * width;
      for (std::size_t i = 0; i < width; ++i) d_row[i] = pooling == Pooling::mean ? scale * d_out[i] : d_out[i];
    }
  }
}

}  // namespace psgrad
