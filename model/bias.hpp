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
    b_index_ = layout.add(layer_name, "b", 1, width_);
  }
  void bind(float* weights, float* gradients, const ParameterLayout& layout) override {
    b_ = weights + layout[b_index_].offset;
    d_b_ = gradients + layout[b_index_].offset;
  }
  void initialize(Random&) override { std::fill(b_, b_ + width_, 0.0f); }
  void reserve(std::size_t max_batch) override {
    output_.resize(static_cast<Eigen::Index>(max_batch), static_cast<Eigen::Index>(width_));
  }
  ConstMatrixMap forward(const ConstMatrixMap& input, bool, Random&) override {
    MatrixMap y(output_.data(), input.rows(), input.cols());
    y = input;
    y.rowwise() += ConstRowVectorMap(b_, width_);
    return ConstMatrixMap(output_.data(), input.rows(), input.cols());
  }
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool) override {
    RowVectorMap(d_b_, width_) = d_output.colwise().sum();
    return d_output;
  }

 private:
  std::size_t width_;
  std::size_t b_index_ = 0;
  float* b_ = nullptr;
  float* d_b_ = nullptr;
  Matrix output_;
};

}  // namespace psgrad
