#include "model/pooling.hpp"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace psgrad {

namespace {

// Thinc's scale: 1/length in double, then stored in the float type of the rows.
float mean_scale(std::size_t length) { return static_cast<float>(1.0 / static_cast<double>(length)); }

constexpr const char* kPoolingNames[] = {"sum", "mean", "max", "first", "last"};

// The bag's row a first or last pooling takes.
std::size_t picked_row(Pooling pooling, std::size_t begin, std::size_t end) {
  return pooling == Pooling::first ? begin : end - 1;
}

}  // namespace

std::optional<Pooling> pooling_named(const std::string& name) {
  for (std::size_t i = 0; i < std::size(kPoolingNames); ++i)
    if (name == kPoolingNames[i]) return static_cast<Pooling>(i);
  return std::nullopt;
}

const char* pooling_name(Pooling pooling) { return kPoolingNames[static_cast<std::size_t>(pooling)]; }

namespace {

// max: each column's largest row.
void pool_max(const float* rows, std::size_t begin, std::size_t end, std::size_t width, float* out) {
  std::copy(rows + begin * width, rows + (begin + 1) * width, out);
  for (std::size_t t = begin + 1; t < end; ++t)
    for (std::size_t i = 0; i < width; ++i) out[i] = std::max(out[i], rows[t * width + i]);
}

}  // namespace

void pool(Pooling pooling, const float* rows, const std::vector<std::size_t>& offsets, std::size_t width,
          float* output, std::size_t output_stride) {
  for (std::size_t e = 0; e + 1 < offsets.size(); ++e) {
    float* out = output + e * output_stride;
    std::fill(out, out + width, 0.0f);
    const std::size_t length = offsets[e + 1] - offsets[e];
    if (length == 0) continue;
    if (pooling == Pooling::max) {
      pool_max(rows, offsets[e], offsets[e + 1], width, out);
      continue;
    }
    if (pooling == Pooling::first || pooling == Pooling::last) {
      const float* row = rows + picked_row(pooling, offsets[e], offsets[e + 1]) * width;
      std::copy(row, row + width, out);
      continue;
    }
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
                   const std::vector<std::size_t>& offsets, std::size_t width, float* d_rows, const float* rows) {
  if (pooling == Pooling::max && rows == nullptr) throw std::logic_error("pool_backward of max needs the rows");
  for (std::size_t e = 0; e + 1 < offsets.size(); ++e) {
    const float* d_out = d_output + e * d_stride;
    const std::size_t length = offsets[e + 1] - offsets[e];
    if (pooling == Pooling::max || pooling == Pooling::first || pooling == Pooling::last) {
      std::fill(d_rows + offsets[e] * width, d_rows + offsets[e + 1] * width, 0.0f);
      if (length == 0) continue;
      if (pooling != Pooling::max) {
        std::copy(d_out, d_out + width, d_rows + picked_row(pooling, offsets[e], offsets[e + 1]) * width);
        continue;
      }
      for (std::size_t i = 0; i < width; ++i) {
        std::size_t best = offsets[e];
        for (std::size_t t = offsets[e] + 1; t < offsets[e + 1]; ++t)
          if (rows[t * width + i] > rows[best * width + i]) best = t;
        d_rows[best * width + i] = d_out[i];
      }
      continue;
    }
    const float scale = pooling == Pooling::mean && length > 0 ? mean_scale(length) : 1.0f;
    for (std::size_t t = offsets[e]; t < offsets[e + 1]; ++t) {
      float* d_row = d_rows + t * width;
      for (std::size_t i = 0; i < width; ++i) d_row[i] = pooling == Pooling::mean ? scale * d_out[i] : d_out[i];
    }
  }
}

}  // namespace psgrad
