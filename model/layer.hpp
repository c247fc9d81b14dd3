// The layer interface: like a Thinc layer, forward returns the output and remembers what its backward
// (the backprop callback) needs; backward overwrites this layer's gradients and returns d(input).
#pragma once

#include <cstddef>
#include <string>

#include "model/matrix.hpp"
#include "model/parameter_layout.hpp"
#include "model/random.hpp"

namespace psgrad {

// One parameter array of a layer: its place in the model's layout once declared, and where its
// weights and gradients are once bound.
struct BoundArray {
  std::size_t index = 0;
  float* values = nullptr;
  float* gradients = nullptr;

  void declare(ParameterLayout& layout, const std::string& layer_name, const std::string& name, std::size_t rows,
               std::size_t cols) {
    index = layout.add(layer_name, name, rows, cols);
  }
  void bind(float* weights, float* gradient_buffer, const ParameterLayout& layout) {
    values = weights + layout[index].offset;
    gradients = gradient_buffer + layout[index].offset;
  }
};

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
