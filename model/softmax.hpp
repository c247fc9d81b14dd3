// Softmax output layer: zero-initialised W and b (Thinc's default); backward takes d(logits) directly,
// i.e. the caller passes (probs - targets) / n, as Thinc's Softmax does.
#pragma once

#include <algorithm>

#include "model/dense.hpp"
#include "model/initializers.hpp"

namespace psgrad {

struct SoftmaxActivation : ZeroInit {
  static constexpr const char* kind = "softmax";
  static constexpr bool needs_pre_activation = false;
  static void forward(MatrixMap& y) {
    for (Eigen::Index row = 0; row < y.rows(); ++row) {
      auto logits = y.row(row);
      // Shift by the row max so exp never overflows.
      const float max_logit = logits.maxCoeff();
      logits = (logits.array() - max_logit).exp().matrix();
      logits /= logits.sum();
    }
  }
  static ConstMatrixMap backward(const ConstMatrixMap&, const ConstMatrixMap& d_logits, MatrixMap) { return d_logits; }
};

using Softmax = Dense<SoftmaxActivation>;

}  // namespace psgrad
