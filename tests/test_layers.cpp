// Gradient checks and semantics of the individual layers.
#include <doctest/doctest.h>

#include <cmath>

#include "model/dropout.hpp"
#include "model/relu.hpp"
#include "model/softmax.hpp"
#include "tests/gradient_check.hpp"

using namespace psgrad;
using psgrad::testing::check_gradient;
using psgrad::testing::random_values;

namespace {

// A layer bound to its own buffers, with a linear objective sum(Y ∘ R) to check backward against.
struct BoundLayer {
  ParameterLayout layout;
  std::vector<float> weights, gradients;
  Layer& layer;
  explicit BoundLayer(Layer& l) : layer(l) {
    layer.declare_parameters("layer", layout);
    weights.assign(layout.total_size(), 0.0f);
    gradients.assign(layout.total_size(), 0.0f);
    layer.bind(weights.data(), gradients.data(), layout);
  }
};

double linear_objective(const ConstMatrixMap& y, const std::vector<float>& r) {
  double total = 0;
  for (Eigen::Index i = 0; i < y.size(); ++i) total += double(y.data()[i]) * r[i];
  return total;
}

}  // namespace

TEST_CASE("relu backward matches finite differences for W, b and the input") {
  const std::size_t n = 5, in = 7, out = 4;
  Relu relu(out, in);
  BoundLayer bound(relu);
  Random init(1);
  relu.initialize(init);
  for (std::size_t i = 0; i < out; ++i) bound.weights[bound.layout[1].offset + i] = 0.1f * float(i);
  relu.reserve(n);
  auto x = random_values(n * in, 2);
  const auto r = random_values(n * out, 3);
  Random unused;

  auto loss = [&] {
    return linear_objective(relu.forward(ConstMatrixMap(x.data(), n, in), true, unused), r);
  };
  loss();
  const ConstMatrixMap dy(r.data(), n, out);
  const auto dx_map = relu.backward(dy, true);
  std::vector<float> dx(dx_map.data(), dx_map.data() + dx_map.size());
  check_gradient(bound.weights, bound.gradients, loss);
  check_gradient(x, dx, loss);
}

TEST_CASE("relu initializes W glorot-uniform within sqrt(6/(nI+nO)) and b to zero") {
  Relu relu(128, 784);
  BoundLayer bound(relu);
  Random rng(7);
  relu.initialize(rng);
  const double limit = std::sqrt(6.0 / (128 + 784));
  double max_abs = 0, mean = 0;
  const auto& w = bound.layout[0];
  for (std::size_t i = 0; i < w.size(); ++i) {
    max_abs = std::max(max_abs, double(std::abs(bound.weights[i])));
    mean += bound.weights[i];
  }
  mean /= double(w.size());
  CHECK(max_abs <= limit);
  CHECK(max_abs > 0.99 * limit);  // a uniform draw of 100k values reaches the edge
  CHECK(std::abs(mean) < 0.01 * limit);
  for (std::size_t i = 0; i < 128; ++i) CHECK(bound.weights[bound.layout[1].offset + i] == 0.0f);
}

TEST_CASE("relu stores W with Thinc's shape (nO, nI)") {
  Relu relu(3, 5);
  BoundLayer bound(relu);
  CHECK(bound.layout[0].rows == 3);
  CHECK(bound.layout[0].cols == 5);
  CHECK(bound.layout[1].size() == 3);
}

TEST_CASE("softmax starts with zero W and b and predicts the uniform distribution") {
  Softmax softmax(10, 6);
  BoundLayer bound(softmax);
  std::fill(bound.weights.begin(), bound.weights.end(), 1.0f);
  Random rng(1);
  softmax.initialize(rng);
  for (float w : bound.weights) CHECK(w == 0.0f);
  softmax.reserve(2);
  const auto x = random_values(12, 4);
  const auto y = softmax.forward(ConstMatrixMap(x.data(), 2, 6), false, rng);
  for (Eigen::Index i = 0; i < y.size(); ++i) CHECK(y.data()[i] == doctest::Approx(0.1f));
}

TEST_CASE("softmax backward with (probs - onehot) / n is the gradient of mean cross-entropy") {
  const std::size_t n = 4, in = 6, out = 5;
  Softmax softmax(out, in);
  BoundLayer bound(softmax);
  bound.weights = random_values(bound.weights.size(), 11, 0.5f);
  softmax.bind(bound.weights.data(), bound.gradients.data(), bound.layout);
  softmax.reserve(n);
  auto x = random_values(n * in, 12);
  std::vector<float> onehot(n * out, 0.0f);
  for (std::size_t i = 0; i < n; ++i) onehot[i * out + (i * 3) % out] = 1.0f;
  Random unused;
  auto loss = [&] {
    const auto probs = softmax.forward(ConstMatrixMap(x.data(), n, in), true, unused);
    double total = 0;
    for (std::size_t i = 0; i < n * out; ++i)
      if (onehot[i] > 0) total -= std::log(double(probs.data()[i]));
    return total / double(n);
  };
  loss();
  const auto probs = softmax.forward(ConstMatrixMap(x.data(), n, in), true, unused);
  std::vector<float> d_logits(n * out);
  for (std::size_t i = 0; i < n * out; ++i) d_logits[i] = (probs.data()[i] - onehot[i]) / float(n);
  const auto dx_map = softmax.backward(ConstMatrixMap(d_logits.data(), n, out), true);
  std::vector<float> dx(dx_map.data(), dx_map.data() + dx_map.size());
  check_gradient(bound.weights, bound.gradients, loss);
  check_gradient(x, dx, loss);
}

TEST_CASE("dropout is inverted, applied only in training, and backward reuses the mask") {
  const std::size_t n = 200, width = 100;
  const float rate = 0.2f;
  Dropout dropout(width, rate);
  dropout.reserve(n);
  std::vector<float> x(n * width, 1.0f);
  Random rng(5);
  const auto y = dropout.forward(ConstMatrixMap(x.data(), n, width), true, rng);
  std::size_t kept = 0;
  for (Eigen::Index i = 0; i < y.size(); ++i) {
    const float v = y.data()[i];
    CHECK((v == 0.0f || v == doctest::Approx(1.0f / (1.0f - rate))));
    kept += v != 0.0f;
  }
  const double kept_fraction = double(kept) / double(n * width);
  CHECK(kept_fraction == doctest::Approx(0.8).epsilon(0.03));
  std::vector<float> dy(n * width, 2.0f);
  const auto dx = dropout.backward(ConstMatrixMap(dy.data(), n, width), true);
  for (Eigen::Index i = 0; i < dx.size(); ++i) CHECK(dx.data()[i] == doctest::Approx(2.0f * y.data()[i]));

  const auto y_eval = dropout.forward(ConstMatrixMap(x.data(), n, width), false, rng);
  for (Eigen::Index i = 0; i < y_eval.size(); ++i) CHECK(y_eval.data()[i] == 1.0f);
}

TEST_CASE("dropout masks depend only on the generator state") {
  Dropout dropout(16, 0.5f);
  dropout.reserve(4);
  std::vector<float> x(64, 1.0f);
  Random a(9), b(9), c(10);
  auto first = dropout.forward(ConstMatrixMap(x.data(), 4, 16), true, a);
  std::vector<float> first_values(first.data(), first.data() + 64);
  auto second = dropout.forward(ConstMatrixMap(x.data(), 4, 16), true, b);
  CHECK(std::equal(first_values.begin(), first_values.end(), second.data()));
  auto third = dropout.forward(ConstMatrixMap(x.data(), 4, 16), true, c);
  CHECK_FALSE(std::equal(first_values.begin(), first_values.end(), third.data()));
}
