// FLOP counts for 784-128-128-10: 2·(784·128 + 128·128 + 128·10) forward, the same for dW, and
// 2·(128·128 + 128·10) for dX: 507,392 FLOPs per training sample.
#include "bench/model_flops.hpp"

namespace psgrad::bench {

std::vector<DenseShape> dense_shapes(const ParameterLayout& layout) {
  std::vector<DenseShape> shapes;
  for (const auto& array : layout.arrays())
    if (array.name == "W") shapes.push_back({array.cols, array.rows});
  return shapes;
}

double forward_flops_per_sample(const std::vector<DenseShape>& shapes) {
  double flops = 0.0;
  for (const auto& shape : shapes) flops += 2.0 * static_cast<double>(shape.inputs * shape.outputs);
  return flops;
}

double training_flops_per_sample(const std::vector<DenseShape>& shapes) {
  const double forward = forward_flops_per_sample(shapes);
  const double first_layer = shapes.empty() ? 0.0 : 2.0 * static_cast<double>(shapes[0].inputs * shapes[0].outputs);
  return forward /* Y */ + forward /* dW */ + (forward - first_layer) /* dX */;
}

}  // namespace psgrad::bench
