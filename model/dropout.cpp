#include "model/dropout.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
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
  uniforms_.resize((max_batch * width_ + 3) / 4 * 4);
}

namespace {

void keep_units(const std::uint16_t* __restrict uniforms, std::uint32_t threshold, float keep_scale,
                const float* __restrict x, float* __restrict mask, float* __restrict y, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) {
    const float keep = std::uint32_t{uniforms[i]} >= threshold ? keep_scale : 0.0f;
    mask[i] = keep;
    y[i] = x[i] * keep;
  }
}

}  // namespace

ConstMatrixMap Dropout::forward(const ConstMatrixMap& input, bool is_train, Random& rng) {
  masked_ = is_train && rate_ > 0.0f;
  rows_ = static_cast<std::size_t>(input.rows());
  if (!masked_) return input;
  const auto n = input.rows();
  if (n > mask_.rows()) throw std::logic_error("Dropout::forward: batch larger than reserved");
  const float keep_scale = 1.0f / (1.0f - rate_);
  // Each 64-bit draw gives four 16-bit uniforms, lowest bits first: a quarter of the generator calls
  // of one draw per unit, and 1/65536 is finer than any rate a config sets. Keep when u >= rate, as
  // Thinc does. The draws come first (the generator is sequential), then the mask in one pass the
  // compiler vectorizes.
  const auto threshold = static_cast<std::uint32_t>(std::ceil(static_cast<double>(rate_) * 65536.0));
  const std::size_t size = static_cast<std::size_t>(n) * width_;
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the uniforms are the draws' 16-bit words in memory order");
  std::uint16_t* uniforms = uniforms_.data();
  for (std::size_t i = 0; i < size; i += 4) {
    const std::uint64_t bits = rng.next();
    std::memcpy(uniforms + i, &bits, sizeof bits);
  }
  keep_units(uniforms, threshold, keep_scale, input.data(), mask_.data(), output_.data(), size);
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
