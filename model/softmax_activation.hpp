// Thinc's softmax_activation.v1: softmax of its input, no parameters; backward is softmax's own
// Jacobian product, Y * (dY - sum(Y * dY)), as Thinc's backprop_softmax computes it.
#pragma once

#include "model/layer.hpp"

namespace psgrad {

class SoftmaxOnly final : public Layer {
 public:
  explicit SoftmaxOnly(std::size_t width) : width_(width) {}

  std::string kind() const override { return "softmax_activation"; }
  std::size_t input_width() const override { return width_; }
  std::size_t output_width() const override { return width_; }
  void reserve(std::size_t max_batch) override {
    output_.resize(static_cast<Eigen::Index>(max_batch), static_cast<Eigen::Index>(width_));
    d_input_.resize(output_.rows(), output_.cols());
  }
  ConstMatrixMap forward(const ConstMatrixMap& input, bool, Random&) override {
    MatrixMap y(output_.data(), input.rows(), input.cols());
    for (Eigen::Index row = 0; row < input.rows(); ++row) {
      const float max_logit = input.row(row).maxCoeff();
      y.row(row) = (input.row(row).array() - max_logit).exp().matrix();
      y.row(row) /= y.row(row).sum();
    }
    rows_ = input.rows();
    return ConstMatrixMap(output_.data(), input.rows(), input.cols());
  }
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool) override {
    const ConstMatrixMap y(output_.data(), rows_, static_cast<Eigen::Index>(width_));
    MatrixMap d_x(d_input_.data(), rows_, static_cast<Eigen::Index>(width_));
    d_x = y.cwiseProduct(d_output);
    for (Eigen::Index row = 0; row < rows_; ++row) d_x.row(row) -= y.row(row) * d_x.row(row).sum();
    return ConstMatrixMap(d_input_.data(), rows_, static_cast<Eigen::Index>(width_));
  }

 private:
  std::size_t width_;
  Eigen::Index rows_ = 0;
  Matrix output_, d_input_;
};

}  // namespace psgrad
