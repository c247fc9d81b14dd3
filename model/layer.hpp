// The layer interface: like a Thinc layer, forward returns the output and remembers what its backward
// (the backprop callback) needs; backward overwrites this layer's gradients and returns d(input).
#pragma once

#include <cstddef>
#include <string>

#include "model/matrix.hpp"
#include "model/parameter_layout.hpp"
#include "model/random.hpp"

namespace psgrad {

class Layer {
 public:
  virtual ~Layer() = default;

  virtual std::string kind() const = 0;  // "relu", "dropout", "softmax"
  virtual std::size_t input_width() const = 0;
  virtual std::size_t output_width() const = 0;

  // Records this layer's parameter arrays under the given layer name. Default: none.
  virtual void declare_parameters(const std::string& /*layer_name*/, ParameterLayout& /*layout*/) {}
  // Points the layer at its slices of the model's weight and gradient buffers.
  virtual void bind(float* /*weights*/, float* /*gradients*/, const ParameterLayout& /*layout*/) {}
  // Writes initial values into the bound weights.
  virtual void initialize(Random& /*rng*/) {}
  // Allocates activation buffers once, so no batch up to max_batch allocates.
  virtual void reserve(std::size_t max_batch) = 0;

  // input stays valid until backward returns. rng draws dropout masks when is_train.
  virtual ConstMatrixMap forward(const ConstMatrixMap& input, bool is_train, Random& rng) = 0;
  // need_input_gradient is false for the first layer: skipping dX there saves a third of its work.
  virtual ConstMatrixMap backward(const ConstMatrixMap& d_output, bool need_input_gradient) = 0;
};

}  // namespace psgrad
