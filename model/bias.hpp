// A learned shift, Y = X + b, b (nO) zero at first: SparseLinear's bias, after its table's rows are summed.
#pragma once

#include "model/layer.hpp"

namespace psgrad {

class Bias final : public Layer {
 public:
  explicit Bias(std::size_t width) : width_(width) {}

  std::string kind() const override { return "sparse_linear"; }
  std::size_t input_width() const override { return width_; }
  std::size_t output_width() const override { return width_; }
  void declare_parameters(const std::string& layer_name, ParameterLayout& layout) override {
    b_.declare(layout, layer_name, "b", 1, width_);
  }
  void bind(float* weights, float* gradients, const ParameterLayout& layout) override {
    b_.bind(weights, gradients, layout);
  }
  void initialize(Random&) override { std::fill(b_.values, b_.values + width_, 0.0f); }
  void reserve(std::size_t max_batch) override {
    output_.resize(static_cast<Eigen::Index>(max_batch), static_cast<Eigen::Index>(width_));
  }
  ConstMatrixMap forward(const ConstMatrixMap& input, bool, Random&) override {
    MatrixMap y(output_.data(), input.rows(), input.cols());
    y = input;
    y.rowwise() += ConstRowVectorMap(b_.values, width_);
    return ConstMatrixMap(output_.data(), input.rows(), input.cols());
  }
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool) override {
    RowVectorMap(b_.gradients, width_) = d_output.colwise().sum();
    return d_output;
  }

 private:
  std::size_t width_;
  BoundArray b_;
  Matrix output_;
};

}  // namespace psgrad
