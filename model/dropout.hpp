// Inverted dropout after an activation: mask = (u >= rate) / (1 - rate), only while training, with
// u drawn in steps of 1/65536.
#pragma once

#include <cstdint>
#include <vector>

#include "model/layer.hpp"

namespace psgrad {

class Dropout final : public Layer {
 public:
  Dropout(std::size_t width, float rate);

  std::string kind() const override { return "dropout"; }
  std::size_t input_width() const override { return width_; }
  std::size_t output_width() const override { return width_; }
  void reserve(std::size_t max_batch) override;
  ConstMatrixMap forward(const ConstMatrixMap& input, bool is_train, Random& rng) override;
  ConstMatrixMap backward(const ConstMatrixMap& d_output, bool need_input_gradient) override;

 private:
  std::size_t width_;
  float rate_;
  bool masked_ = false;  // whether the last forward applied a mask
  std::size_t rows_ = 0;
  Matrix mask_, output_, d_input_;
  std::vector<std::uint16_t> uniforms_;  // the 16-bit draws of one forward, four per generator call
};

}  // namespace psgrad
