// A dense layer, Y = activation(X·Wᵀ + b) with W (nO, nI) and b (nO), as Thinc's Relu and Softmax
// are: the parameters, their binding and the products are shared; the activation is a policy that
// says how to initialise, how to activate the pre-activations in place, and what backward does with
// d(output) before the products (as mlpack's layers take theirs). A policy with needs_pre_activation
// gets the pre-activations in backward instead of the outputs.
#pragma once

#include <string>

#include "model/gemm_blocking.hpp"
#include "model/layer.hpp"
#include "model/weight_initializer.hpp"

namespace psgrad {

template <class Activation>
class Dense final : public Layer {
 public:
  // `chosen`: a config's init_W and init_b, each in place of the activation's own.
  Dense(std::size_t output_width, std::size_t input_width, ArrayInitializers chosen = {})
      : output_width_(output_width), input_width_(input_width), chosen_(std::move(chosen)) {
    pin_gemm_blocking();
  }

  std::string kind() const override { return Activation::kind; }
  std::size_t input_width() const override { return input_width_; }
  std::size_t output_width() const override { return output_width_; }

  void declare_parameters(const std::string& layer_name, ParameterLayout& layout) override {
    w_.declare(layout, layer_name, "W", output_width_, input_width_);
    b_.declare(layout, layer_name, "b", 1, output_width_);
  }

  void bind(float* weights, float* gradients, const ParameterLayout& layout) override {
    w_.bind(weights, gradients, layout);
    b_.bind(weights, gradients, layout);
  }

  void initialize(Random& rng) override {
    Activation::initialize(w_.values, b_.values, output_width_, input_width_, rng);
    if (chosen_.weights) chosen_.weights->fill(w_.values, {output_width_, input_width_}, rng);
    if (chosen_.bias) chosen_.bias->fill(b_.values, {output_width_}, rng);
  }

  void reserve(std::size_t max_batch) override {
    output_.resize(static_cast<Eigen::Index>(max_batch), static_cast<Eigen::Index>(output_width_));
    d_pre_activation_.resize(output_.rows(), output_.cols());
    d_input_.resize(output_.rows(), static_cast<Eigen::Index>(input_width_));
    if constexpr (Activation::needs_pre_activation) pre_activation_.resize(output_.rows(), output_.cols());
  }

  ConstMatrixMap forward(const ConstMatrixMap& input, bool /*is_train*/, Random& /*rng*/) override {
    const auto n = input.rows();
    if (n > output_.rows() || input.cols() != static_cast<Eigen::Index>(input_width_))
      throw std::logic_error(std::string(Activation::kind) + " forward: batch larger than reserved or wrong input width");
    const ConstMatrixMap w(w_.values, output_width_, input_width_);
    const ConstRowVectorMap b(b_.values, output_width_);
    MatrixMap y(output_.data(), n, output_width_);
    y.noalias() = input * w.transpose();
    y.rowwise() += b;
    // Swish, Gelu, HardSwish and Mish differentiate at the pre-activation, not at the output.
    if constexpr (Activation::needs_pre_activation)
      MatrixMap(pre_activation_.data(), n, output_width_) = y;
    Activation::forward(y);
    input_ = input.data();
    rows_ = static_cast<std::size_t>(n);
    return ConstMatrixMap(output_.data(), n, output_width_);
  }

  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool need_input_gradient) override {
    const auto n = static_cast<Eigen::Index>(rows_);
    const ConstMatrixMap y(output_.data(), n, output_width_);
    const ConstMatrixMap x(input_, n, input_width_);
    const ConstMatrixMap w(w_.values, output_width_, input_width_);
    const ConstMatrixMap d_pre = backward_activation(y, d_output, MatrixMap(d_pre_activation_.data(), n, output_width_));
    MatrixMap(w_.gradients, output_width_, input_width_).noalias() = d_pre.transpose() * x;
    RowVectorMap(b_.gradients, output_width_) = d_pre.colwise().sum();
    if (!need_input_gradient) return ConstMatrixMap(d_input_.data(), 0, input_width_);
    MatrixMap d_x(d_input_.data(), n, input_width_);
    d_x.noalias() = d_pre * w;
    return ConstMatrixMap(d_input_.data(), n, input_width_);
  }

 private:
  ConstMatrixMap backward_activation(const ConstMatrixMap& y, const ConstMatrixMap& d_output, MatrixMap scratch) const {
    if constexpr (Activation::needs_pre_activation) {
      const ConstMatrixMap pre(pre_activation_.data(), y.rows(), y.cols());
      return Activation::backward(pre, d_output, scratch);
    } else {
      return Activation::backward(y, d_output, scratch);
    }
  }

  std::size_t output_width_, input_width_;
  ArrayInitializers chosen_;
  BoundArray w_, b_;
  const float* input_ = nullptr;
  std::size_t rows_ = 0;
  Matrix output_, d_pre_activation_, d_input_, pre_activation_;
};

}  // namespace psgrad
