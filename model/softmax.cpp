#include "model/softmax.hpp"

#include <algorithm>
#include <stdexcept>

namespace psgrad {

Softmax::Softmax(std::size_t output_width, std::size_t input_width)
    : output_width_(output_width), input_width_(input_width) {}

void Softmax::declare_parameters(const std::string& layer_name, ParameterLayout& layout) {
  w_index_ = layout.add(layer_name, "W", output_width_, input_width_);
  b_index_ = layout.add(layer_name, "b", 1, output_width_);
}

void Softmax::bind(float* weights, float* gradients, const ParameterLayout& layout) {
  w_ = weights + layout[w_index_].offset;
  b_ = weights + layout[b_index_].offset;
  d_w_ = gradients + layout[w_index_].offset;
  d_b_ = gradients + layout[b_index_].offset;
}

void Softmax::initialize(Random& /*rng*/) {
  std::fill(w_, w_ + output_width_ * input_width_, 0.0f);
  std::fill(b_, b_ + output_width_, 0.0f);
}

void Softmax::reserve(std::size_t max_batch) {
  output_.resize(static_cast<Eigen::Index>(max_batch), static_cast<Eigen::Index>(output_width_));
  d_input_.resize(output_.rows(), static_cast<Eigen::Index>(input_width_));
}

ConstMatrixMap Softmax::forward(const ConstMatrixMap& input, bool /*is_train*/, Random& /*rng*/) {
  const auto n = input.rows();
  if (n > output_.rows() || input.cols() != static_cast<Eigen::Index>(input_width_))
    throw std::logic_error("Softmax::forward: batch larger than reserved or wrong input width");
  const ConstMatrixMap w(w_, output_width_, input_width_);
  const ConstRowVectorMap b(b_, output_width_);
  MatrixMap y(output_.data(), n, output_width_);
  y.noalias() = input * w.transpose();
  y.rowwise() += b;
  for (Eigen::Index row = 0; row < n; ++row) {
    auto logits = y.row(row);
    // Shift by the row max so exp never overflows.
    const float max_logit = logits.maxCoeff();
    logits = (logits.array() - max_logit).exp().matrix();
    logits /= logits.sum();
  }
  input_ = input.data();
  rows_ = static_cast<std::size_t>(n);
  return ConstMatrixMap(output_.data(), n, output_width_);
}

ConstMatrixMap Softmax::backward(const ConstMatrixMap& d_logits, bool need_input_gradient) {
  const auto n = static_cast<Eigen::Index>(rows_);
  const ConstMatrixMap x(input_, n, input_width_);
  const ConstMatrixMap w(w_, output_width_, input_width_);
  MatrixMap(d_w_, output_width_, input_width_).noalias() = d_logits.transpose() * x;
  RowVectorMap(d_b_, output_width_) = d_logits.colwise().sum();
  if (!need_input_gradient) return ConstMatrixMap(d_input_.data(), 0, input_width_);
  MatrixMap d_x(d_input_.data(), n, input_width_);
  d_x.noalias() = d_logits * w;
  return ConstMatrixMap(d_input_.data(), n, input_width_);
}

}  // namespace psgrad
