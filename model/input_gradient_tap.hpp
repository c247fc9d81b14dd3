// A parameterless first layer that passes its input through and keeps the gradient that comes back to
// it: the gradient of the dense chain's input, which a Model does not return but a front of embedding
// tables needs for its own backward.
#pragma once

#include "model/layer.hpp"

namespace psgrad {

class InputGradientTap final : public Layer {
 public:
  explicit InputGradientTap(std::size_t width) : width_(width) {}

  std::string kind() const override { return "input"; }
  std::size_t input_width() const override { return width_; }
  std::size_t output_width() const override { return width_; }
  void reserve(std::size_t /*max_batch*/) override {}

  ConstMatrixMap forward(const ConstMatrixMap& input, bool /*is_train*/, Random& /*rng*/) override { return input; }

  // The layer after this one computes d(input) because this one is not first in the chain.
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool /*need_input_gradient*/) override {
    gradient_ = d_output.data();
    rows_ = d_output.rows();
    return d_output;
  }

  // The last backward's gradient (rows x width), valid until the chain's next forward or backward.
  ConstMatrixMap input_gradient() const { return ConstMatrixMap(gradient_, rows_, static_cast<Eigen::Index>(width_)); }

 private:
  std::size_t width_;
  const float* gradient_ = nullptr;
  Eigen::Index rows_ = 0;
};

}  // namespace psgrad
