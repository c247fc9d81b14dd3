// Relu: Y = relu(X·Wᵀ + b), W (nO, nI) Glorot-uniform, b zero, as Thinc's Relu.
#pragma once

#include <algorithm>

#include "model/dense.hpp"
#include "model/initializers.hpp"

namespace psgrad {

struct ReluActivation : GlorotUniformInit {
  static constexpr const char* kind = "relu";
  static constexpr bool needs_pre_activation = false;
  static void forward(MatrixMap& y) { y = y.cwiseMax(0.0f); }
  // d(pre-activation) = d(output) where the unit was active, else 0.
  static ConstMatrixMap backward(const ConstMatrixMap& y, const ConstMatrixMap& d_output, MatrixMap scratch) {
    scratch = (y.array() > 0.0f).select(d_output, 0.0f);
    return ConstMatrixMap(scratch.data(), scratch.rows(), scratch.cols());
  }
};

using Relu = Dense<ReluActivation>;

}  // namespace psgrad
