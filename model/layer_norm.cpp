#include "model/layer_norm.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace psgrad {

void LayerNorm::declare_parameters(const std::string& layer_name, ParameterLayout& layout) {
  g_.declare(layout, layer_name, "G", 1, width_);
  b_.declare(layout, layer_name, "b", 1, width_);
}

void LayerNorm::bind(float* weights, float* gradients, const ParameterLayout& layout) {
  g_.bind(weights, gradients, layout);
  b_.bind(weights, gradients, layout);
}

void LayerNorm::initialize(Random& /*rng*/) {
  std::fill(g_.values, g_.values + width_, 1.0f);
  std::fill(b_.values, b_.values + width_, 0.0f);
}

void LayerNorm::reserve(std::size_t max_batch) {
  const auto rows = static_cast<Eigen::Index>(max_batch);
  normalized_.resize(rows, static_cast<Eigen::Index>(width_));
  output_.resize(rows, static_cast<Eigen::Index>(width_));
  d_input_.resize(rows, static_cast<Eigen::Index>(width_));
  mean_.resize(max_batch);
  variance_.resize(max_batch);
}

ConstMatrixMap LayerNorm::forward(const ConstMatrixMap& input, bool /*is_train*/, Random& /*rng*/) {
  const auto n = input.rows();
  if (n > output_.rows() || input.cols() != static_cast<Eigen::Index>(width_))
    throw std::logic_error("layernorm forward: batch larger than reserved or wrong input width");
  const ConstRowVectorMap g(g_.values, width_);
  const ConstRowVectorMap b(b_.values, width_);
  for (Eigen::Index row = 0; row < n; ++row) {
    const auto x = input.row(row);
    const float mean = x.mean();
    const float variance = (x.array() - mean).square().mean() + 1e-8f;
    mean_[static_cast<std::size_t>(row)] = mean;
    variance_[static_cast<std::size_t>(row)] = variance;
    auto x_hat = normalized_.row(row);
    x_hat = (x.array() - mean) / std::sqrt(variance);
    output_.row(row) = x_hat.cwiseProduct(g) + b;
  }
  input_ = input.data();
  rows_ = static_cast<std::size_t>(n);
  return ConstMatrixMap(output_.data(), n, width_);
}

ConstMatrixMap LayerNorm::backward(const ConstMatrixMap& d_output, bool need_input_gradient) {
  const auto n = static_cast<Eigen::Index>(rows_);
  const ConstMatrixMap x_hat(normalized_.data(), n, width_);
  RowVectorMap(b_.gradients, width_) = d_output.colwise().sum();
  RowVectorMap(g_.gradients, width_) = d_output.cwiseProduct(x_hat).colwise().sum();
  if (!need_input_gradient) return ConstMatrixMap(d_input_.data(), 0, width_);
  const ConstRowVectorMap g(g_.values, width_);
  const ConstMatrixMap x(input_, n, width_);
  const auto count = static_cast<float>(width_);
  for (Eigen::Index row = 0; row < n; ++row) {
    // Thinc's backprop: through the scale, then through the moments.
    const Eigen::RowVectorXf d_y = d_output.row(row).cwiseProduct(g);
    const Eigen::RowVectorXf distance = x.row(row).array() - mean_[static_cast<std::size_t>(row)];
    const float variance = variance_[static_cast<std::size_t>(row)];
    const float sum_d_y = d_y.sum();
    const float sum_d_y_distance = d_y.cwiseProduct(distance).sum();
    d_input_.row(row) = ((count * d_y.array() - sum_d_y - distance.array() * (sum_d_y_distance / variance)) /
                         std::sqrt(variance)) / count;
  }
  return ConstMatrixMap(d_input_.data(), n, width_);
}

}  // namespace psgrad
