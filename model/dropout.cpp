#include "model/dropout.hpp"

#include <cmath>
#include <cstdint>
#include <stdexcept>

namespace psgrad {

Dropout::Dropout(std::size_t width, float rate) : width_(width), rate_(rate) {
  if (!(rate >= 0.0f && rate < 1.0f)) throw std::invalid_argument("dropout rate must be in [0, 1)");
}

void Dropout::reserve(std::size_t max_batch) {
  const auto rows = static_cast<Eigen::Index>(max_batch);
  const auto cols = static_cast<Eigen::Index>(width_);
  mask_.resize(rows, cols);
  output_.resize(rows, cols);
  d_input_.resize(rows, cols);
}

ConstMatrixMap Dropout::forward(const ConstMatrixMap& input, bool is_train, Random& rng) {
  masked_ = is_train && rate_ > 0.0f;
  rows_ = static_cast<std::size_t>(input.rows());
  if (!masked_) return input;
  const auto n = input.rows();
  if (n > mask_.rows()) throw std::logic_error("Dropout::forward: batch larger than reserved");
  const float keep_scale = 1.0f / (1.0f - rate_);
  // Each 64-bit draw gives four 16-bit uniforms: a quarter of the generator calls of one draw per
  // unit, and 1/65536 is finer than any rate a config sets. Keep when u >= rate, as Thinc does.
  const auto threshold = static_cast<std::uint32_t>(std::ceil(static_cast<double>(rate_) * 65536.0));
  const std::size_t size = static_cast<std::size_t>(n) * width_;
  float* mask = mask_.data();
  float* y = output_.data();
  const float* x = input.data();
  std::size_t i = 0;
  for (; i < size; i += 4) {
    std::uint64_t bits = rng.next();
    for (std::size_t j = 0; j < 4 && i + j < size; ++j, bits >>= 16) {
      const float keep = (bits & 0xffffu) >= threshold ? keep_scale : 0.0f;
      mask[i + j] = keep;
      y[i + j] = x[i + j] * keep;
    }
  }
  return ConstMatrixMap(output_.data(), n, width_);
}

ConstMatrixMap Dropout::backward(const ConstMatrixMap& d_output, bool /*need_input_gradient*/) {
  if (!masked_) return d_output;
  const auto n = static_cast<Eigen::Index>(rows_);
  MatrixMap d_x(d_input_.data(), n, width_);
  d_x = d_output.cwiseProduct(ConstMatrixMap(mask_.data(), n, width_));
  return ConstMatrixMap(d_input_.data(), n, width_);
}

}  // namespace psgrad
