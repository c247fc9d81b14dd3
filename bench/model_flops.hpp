// The MLP's matrix-product work, counted from its parameter layout: what "FLOPs per sample" means here.
#pragma once

#include <cstddef>
#include <vector>

#include "model/parameter_layout.hpp"

namespace psgrad::bench {

struct DenseShape {
  std::size_t inputs = 0;   // W's columns
  std::size_t outputs = 0;  // W's rows
};

// Every "W" array in layer order (biases, activations and dropout are not counted: they are
// element-wise and small next to the products).
std::vector<DenseShape> dense_shapes(const ParameterLayout& layout);

// Multiply-adds count two FLOPs. Training: forward Y = X·Wᵀ, dW = dYᵀ·X for every layer, and
// dX = dY·W for every layer but the first (the model skips the input's gradient).
double forward_flops_per_sample(const std::vector<DenseShape>& shapes);
double training_flops_per_sample(const std::vector<DenseShape>& shapes);

}  // namespace psgrad::bench
