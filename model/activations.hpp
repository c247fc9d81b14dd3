// The dense layers beside Relu and Softmax, with Thinc 8.1.7's activations and initializers: Linear,
// Sigmoid, Mish, Swish, Gelu and HardSwish, each a Dense<Activation> like Relu.
#pragma once

#include <algorithm>
#include <cmath>

#include "model/dense.hpp"
#include "model/initializers.hpp"

namespace psgrad {

namespace activation_math {

// Thinc's sigmoid clips its input to [-20, 20] so exp never overflows.
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-std::clamp(x, -20.0f, 20.0f))); }

// Thinc's erf (Abramowitz and Stegun 7.1.26, as Thinc's Ops.erf), so Gelu agrees to float precision.
inline float erf(float x) {
  const float sign = x < 0.0f ? -1.0f : (x > 0.0f ? 1.0f : 0.0f);
  x = std::fabs(x);
  const double t = 1.0 / (1.0 + 0.3275911 * x);
  const double y =
      1.0 - (((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t *
                std::exp(-static_cast<double>(x) * x);
  return sign * static_cast<float>(y);
}

inline float gaussian_cdf(float x) { return 0.5f * (1.0f + erf(x * 0.70710678118654752f)); }
inline float gaussian_pdf(float x) { return 0.39894228040143268f * std::exp(-0.5f * x * x); }

constexpr float kMishThreshold = 20.0f;

}  // namespace activation_math

// d(pre-activation) = d(output) x the activation's derivative at each value (f(d, x)), into scratch.
template <class Derivative>
ConstMatrixMap elementwise_backward(const ConstMatrixMap& x, const ConstMatrixMap& d_output, MatrixMap scratch,
                                    Derivative derivative) {
  scratch = d_output.binaryExpr(x, derivative);
  return ConstMatrixMap(scratch.data(), scratch.rows(), scratch.cols());
}

struct LinearActivation : GlorotUniformInit {
  static constexpr const char* kind = "linear";
  static constexpr bool needs_pre_activation = false;
  static void forward(MatrixMap&) {}
  static ConstMatrixMap backward(const ConstMatrixMap&, const ConstMatrixMap& d_output, MatrixMap) { return d_output; }
};

struct SigmoidActivation : ZeroInit {
  static constexpr const char* kind = "sigmoid";
  static constexpr bool needs_pre_activation = false;
  static void forward(MatrixMap& y) { y = y.unaryExpr([](float x) { return activation_math::sigmoid(x); }); }
  static ConstMatrixMap backward(const ConstMatrixMap& y, const ConstMatrixMap& d_output, MatrixMap scratch) {
    scratch = d_output.array() * y.array() * (1.0f - y.array());
    return ConstMatrixMap(scratch.data(), scratch.rows(), scratch.cols());
  }
};

struct MishActivation : GlorotUniformInit {
  static constexpr const char* kind = "mish";
  static constexpr bool needs_pre_activation = true;
  static void forward(MatrixMap& y) {
    y = y.unaryExpr([](float x) {
      return x < activation_math::kMishThreshold ? x * std::tanh(std::log1p(std::exp(x))) : x;
    });
  }
  static ConstMatrixMap backward(const ConstMatrixMap& x, const ConstMatrixMap& d_output, MatrixMap scratch) {
    return elementwise_backward(x, d_output, scratch, [](float d, float v) {
      if (v >= activation_math::kMishThreshold) return d;
      const double e = std::exp(static_cast<double>(v));
      const double omega = 4.0 * (v + 1.0) + 4.0 * e * e + e * e * e + e * (4.0 * v + 6.0);
      const double delta = 2.0 * e + e * e + 2.0;
      return static_cast<float>(d * e * omega / (delta * delta));
    });
  }
};

struct SwishActivation : HeNormalInit {
  static constexpr const char* kind = "swish";
  static constexpr bool needs_pre_activation = true;
  static void forward(MatrixMap& y) { y = y.unaryExpr([](float x) { return x * activation_math::sigmoid(x); }); }
  // Thinc's backprop_swish: dX = dY * (Y + sigmoid(X) * (1 - Y)).
  static ConstMatrixMap backward(const ConstMatrixMap& x, const ConstMatrixMap& d_output, MatrixMap scratch) {
    return elementwise_backward(x, d_output, scratch, [](float d, float v) {
      const float s = activation_math::sigmoid(v);
      const float y = v * s;
      return d * (y + s * (1.0f - y));
    });
  }
};

struct GeluActivation : HeNormalInit {
  static constexpr const char* kind = "gelu";
  static constexpr bool needs_pre_activation = true;
  static void forward(MatrixMap& y) { y = y.unaryExpr([](float x) { return x * activation_math::gaussian_cdf(x); }); }
  static ConstMatrixMap backward(const ConstMatrixMap& x, const ConstMatrixMap& d_output, MatrixMap scratch) {
    return elementwise_backward(x, d_output, scratch, [](float d, float v) {
      return d * (activation_math::gaussian_cdf(v) + v * activation_math::gaussian_pdf(v));
    });
  }
};

struct HardSwishActivation : HeNormalInit {
  static constexpr const char* kind = "hardswish";
  static constexpr bool needs_pre_activation = true;
  // x * hard_sigmoid(x), hard_sigmoid = clip(0.2 x + 0.5, 0, 1).
  static void forward(MatrixMap& y) {
    y = y.unaryExpr([](float x) { return x * std::clamp(0.2f * x + 0.5f, 0.0f, 1.0f); });
  }
  static ConstMatrixMap backward(const ConstMatrixMap& x, const ConstMatrixMap& d_output, MatrixMap scratch) {
    return elementwise_backward(x, d_output, scratch, [](float d, float v) {
      const float slope = v > 2.5f ? 1.0f : (v < -2.5f ? 0.0f : 0.4f * v + 0.5f);
      return d * slope;
    });
  }
};

using Linear = Dense<LinearActivation>;
using Sigmoid = Dense<SigmoidActivation>;
using Mish = Dense<MishActivation>;
using Swish = Dense<SwishActivation>;
using Gelu = Dense<GeluActivation>;
using HardSwish = Dense<HardSwishActivation>;

}  // namespace psgrad
