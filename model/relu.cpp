#include "model/relu.hpp"

#include <cmath>
#include <stdexcept>

#include "model/initializers.hpp"

namespace psgrad {

Relu::Relu(std::size_t output_width, std::size_t input_width)
    : output_width_(output_width), input_width_(input_width) {}

void Relu::declare_parameters(const std::string& layer_name, ParameterLayout& layout) {
  w_index_ = layout.add(layer_name, "W", output_width_, input_width_);
  b_index_ = layout.add(layer_name, "b", 1, output_width_);
}

void Relu::bind(float* weights, float* gradients, const ParameterLayout& layout) {
  w_ = weights + layout[w_index_].offset;
  b_ = weights + layout[b_index_].offset;
  d_w_ = gradients + layout[w_index_].offset;
  d_b_ = gradients + layout[b_index_].offset;
}

void Relu::initialize(Random& rng) {
  glorot_uniform(w_, output_width_, input_width_, rng);
  std::fill(b_, b_ + output_width_, 0.0f);
}

void Relu::reserve(std::size_t max_batch) {
  output_.resize(static_cast<Eigen::Index>(max_batch), static_cast<Eigen::Index>(output_width_));
  d_pre_activation_.resize(output_.rows(), output_.cols());
  d_input_.resize(output_.rows(), static_cast<Eigen::Index>(input_width_));
}

ConstMatrixMap Relu::forward(const ConstMatrixMap& input, bool /*is_train*/, Random& /*rng*/) {
  const auto n = input.rows();
  if (n > output_.rows() || input.cols() != static_cast<Eigen::Index>(input_width_))
    throw std::logic_error("Relu::forward: batch larger than reserved or wrong input width");
  const ConstMatrixMap w(w_, output_width_, input_width_);
  const ConstRowVectorMap b(b_, output_width_);
  MatrixMap y(output_.data(), n, output_width_);
  y.noalias() = input * w.transpose();
  y.rowwise() += b;
  y = y.cwiseMax(0.0f);
  input_ = input.data();
  rows_ = static_cast<std::size_t>(n);
  return ConstMatrixMap(output_.data(), n, output_width_);
}

ConstMatrixMap Relu::backward(const ConstMatrixMap& d_output, bool need_input_gradient) {
  const auto n = static_cast<Eigen::Index>(rows_);
  const ConstMatrixMap y(output_.data(), n, output_width_);
  const ConstMatrixMap x(input_, n, input_width_);
  const ConstMatrixMap w(w_, output_width_, input_width_);
  MatrixMap d_pre(d_pre_activation_.data(), n, output_width_);
  d_pre = (y.array() > 0.0f).select(d_output, 0.0f);
  MatrixMap(d_w_, output_width_, input_width_).noalias() = d_pre.transpose() * x;
  RowVectorMap(d_b_, output_width_) = d_pre.colwise().sum();
  if (!need_input_gradient) return ConstMatrixMap(d_input_.data(), 0, input_width_);
  MatrixMap d_x(d_input_.data(), n, input_width_);
  d_x.noalias() = d_pre * w;
  return ConstMatrixMap(d_input_.data(), n, input_width_);
}

}  // namespace psgrad
