// Maxout, as Thinc's Maxout.v1: nP linear pieces per output, Y[n, o] = max_p (X·W[o, p]ᵀ + b[o, p]),
// W (nO, nP, nI) Glorot-uniform over its first two axes and b (nO, nP) zero, as Thinc initializes them.
#pragma once

#include <cstdint>
#include <vector>

#include "model/layer.hpp"
#include "model/weight_initializer.hpp"

namespace psgrad {

class Maxout final : public Layer {
 public:
  // `chosen`: a config's init_W and init_b, in place of Thinc's defaults.
  Maxout(std::size_t output_width, std::size_t input_width, std::size_t pieces, ArrayInitializers chosen = {});

  std::string kind() const override { return "maxout"; }
  std::size_t input_width() const override { return input_width_; }
  std::size_t output_width() const override { return output_width_; }
  void declare_parameters(const std::string& layer_name, ParameterLayout& layout) override;
  void bind(float* weights, float* gradients, const ParameterLayout& layout) override;
  void initialize(Random& rng) override;
  void reserve(std::size_t max_batch) override;
  ConstMatrixMap forward(const ConstMatrixMap& input, bool is_train, Random& rng) override;
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool need_input_gradient) override;

 private:
  std::size_t output_width_, input_width_, pieces_;
  ArrayInitializers chosen_;
  BoundArray w_, b_;
  const float* input_ = nullptr;
  std::size_t rows_ = 0;
  Matrix pieces_out_, output_, d_pieces_, d_input_;
  std::vector<std::uint32_t> which_;  // the winning piece of each output
};

}  // namespace psgrad
