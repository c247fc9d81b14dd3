// Relu: Y = relu(X·Wᵀ + b), W (nO, nI) Glorot-uniform, b zero, as Thinc's Relu.
#pragma once

#include "model/layer.hpp"

namespace psgrad {

class Relu final : public Layer {
 public:
  Relu(std::size_t output_width, std::size_t input_width);

  std::string kind() const override { return "relu"; }
  std::size_t input_width() const override { return input_width_; }
  std::size_t output_width() const override { return output_width_; }
  void declare_parameters(const std::string& layer_name, ParameterLayout& layout) override;
  void bind(float* weights, float* gradients, const ParameterLayout& layout) override;
  void initialize(Random& rng) override;
  void reserve(std::size_t max_batch) override;
  ConstMatrixMap forward(const ConstMatrixMap& input, bool is_train, Random& rng) override;
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool need_input_gradient) override;

 private:
  std::size_t output_width_, input_width_;
  std::size_t w_index_ = 0, b_index_ = 0;
  float* w_ = nullptr;
  float* b_ = nullptr;
  float* d_w_ = nullptr;
  float* d_b_ = nullptr;
  const float* input_ = nullptr;
  std::size_t rows_ = 0;
  Matrix output_, d_pre_activation_, d_input_;
};

}  // namespace psgrad
