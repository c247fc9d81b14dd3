// LayerNorm, as Thinc's LayerNorm.v1: each row scaled to zero mean and unit variance (variance + 1e-8),
// then Y = X̂ * G + b with G (nI) one and b (nI) zero at first.
#pragma once

#include <vector>

#include "model/layer.hpp"

namespace psgrad {

class LayerNorm final : public Layer {
 public:
  explicit LayerNorm(std::size_t width) : width_(width) {}

  std::string kind() const override { return "layernorm"; }
  std::size_t input_width() const override { return width_; }
  std::size_t output_width() const override { return width_; }
  void declare_parameters(const std::string& layer_name, ParameterLayout& layout) override;
  void bind(float* weights, float* gradients, const ParameterLayout& layout) override;
  void initialize(Random& rng) override;
  void reserve(std::size_t max_batch) override;
  ConstMatrixMap forward(const ConstMatrixMap& input, bool is_train, Random& rng) override;
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool need_input_gradient) override;

 private:
  std::size_t width_;
  BoundArray g_, b_;
  const float* input_ = nullptr;
  std::size_t rows_ = 0;
  Matrix normalized_, output_, d_input_;
  std::vector<float> mean_, variance_;  // per row; the variance includes Thinc's 1e-8
};

}  // namespace psgrad
