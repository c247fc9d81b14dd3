// The model chain: registry-built architectures, the contiguous buffers, and whole-chain gradients.
#include <doctest/doctest.h>

#include "model/model.hpp"
#include "model/softmax.hpp"
#include "tests/gradient_check.hpp"

using namespace psgrad;
using psgrad::testing::check_gradient;
using psgrad::testing::random_values;

namespace {

Model reference_model(std::int64_t width, double dropout, std::size_t in = 784) {
  auto model = Model::build("relu_relu_softmax.v1",
                            Settings{{"hidden_width", width}, {"dropout", dropout}}, in, 10);
  REQUIRE(model.ok());
  return std::move(model).value();
}

}  // namespace

TEST_CASE("relu_relu_softmax lays out all parameters in one contiguous buffer") {
  auto model = reference_model(128, 0.2);
  const auto& layout = model.layout();
  REQUIRE(layout.array_count() == 6);
  CHECK(layout.describe() ==
        "relu1.W 128x784 @0\nrelu1.b 1x128 @100352\nrelu2.W 128x128 @100480\n"
        "relu2.b 1x128 @116864\nsoftmax1.W 10x128 @116992\nsoftmax1.b 1x10 @118272\n");
  CHECK(model.parameter_count() == 118282);
  CHECK(model.weights().size() == 118282);
  CHECK(model.gradients().size() == 118282);
}

TEST_CASE("layout hash tells different architectures apart") {
  auto a = reference_model(128, 0.2);
  auto b = reference_model(64, 0.2);
  auto c = reference_model(128, 0.5);
  CHECK(a.layout().hash() != b.layout().hash());
  CHECK(a.layout().hash() == c.layout().hash());  // dropout has no parameters
}

TEST_CASE("unknown architecture is an error naming it") {
  auto model = Model::build("nope.v1", {}, 784, 10);
  REQUIRE_FALSE(model.ok());
  CHECK(model.error().find("nope.v1") != std::string::npos);
}

TEST_CASE("mlp.v1 builds one relu per width") {
  auto model = Model::build("mlp.v1", Settings{{"widths", std::vector<std::int64_t>{32, 16, 8}}}, 20, 3);
  REQUIRE(model.ok());
  CHECK(model->layout().array_count() == 8);
  CHECK(model->layout()[6].rows == 3);
  CHECK(model->layout()[6].cols == 8);
}

TEST_CASE("a user architecture registers with one call") {
  register_architecture({"tiny.v1", "one softmax", {}, [](const Settings&, std::size_t in, std::size_t out) {
                           LayerChain chain;
                           chain.push_back(std::make_unique<Softmax>(out, in));
                           return chain;
                         }});
  auto model = Model::build("tiny.v1", {}, 4, 2);
  REQUIRE(model.ok());
  CHECK(model->parameter_count() == 10);
}

TEST_CASE("whole-chain gradient matches finite differences with dropout fixed by seed") {
  const std::size_t n = 6, in = 9;
  auto model = reference_model(5, 0.3, in);
  model.initialize(3);
  // Softmax starts at zero, which hides the Relu gradients; give it random weights for the check.
  std::vector<float> weights(model.weights().begin(), model.weights().end());
  const auto& softmax_w = model.layout()[4];
  auto random = random_values(softmax_w.size() + 10, 4, 0.5f);
  std::copy(random.begin(), random.end(), weights.begin() + softmax_w.offset);
  model.set_weights(weights.data(), weights.size());

  const auto x = random_values(n * in, 5);
  std::vector<float> y(n * 10, 0.0f);
  for (std::size_t i = 0; i < n; ++i) y[i * 10 + i % 10] = 1.0f;
  const Random dropout_seed(6);
  auto loss = [&] {
    model.set_weights(weights.data(), weights.size());
    Random rng = dropout_seed;
    return double(model.compute_gradients(ConstMatrixMap(x.data(), n, in), ConstMatrixMap(y.data(), n, 10), rng));
  };
  loss();
  const std::vector<float> analytic(model.gradients().begin(), model.gradients().end());
  check_gradient(weights, analytic, loss);
}

TEST_CASE("gradients are fresh per batch, not accumulated") {
  auto model = reference_model(16, 0.0, 12);
  model.initialize(1);
  const auto x = random_values(4 * 12, 2);
  std::vector<float> y(40, 0.0f);
  for (int i = 0; i < 4; ++i) y[i * 10 + i] = 1.0f;
  Random rng(1);
  model.compute_gradients(ConstMatrixMap(x.data(), 4, 12), ConstMatrixMap(y.data(), 4, 10), rng);
  const auto first = model.gradients();
  model.compute_gradients(ConstMatrixMap(x.data(), 4, 12), ConstMatrixMap(y.data(), 4, 10), rng);
  CHECK(model.gradients() == first);
}

TEST_CASE("the first backward pass sends zero gradients to the relu layers") {
  auto model = reference_model(16, 0.2, 12);
  model.initialize(1);
  const auto x = random_values(4 * 12, 2);
  std::vector<float> y(40, 0.0f);
  for (int i = 0; i < 4; ++i) y[i * 10 + i] = 1.0f;
  Random rng(1);
  model.compute_gradients(ConstMatrixMap(x.data(), 4, 12), ConstMatrixMap(y.data(), 4, 10), rng);
  const auto& g = model.gradients();
  const auto softmax_offset = model.layout()[4].offset;
  for (std::size_t i = 0; i < softmax_offset; ++i) REQUIRE(g[i] == 0.0f);
  double softmax_sum = 0;
  for (std::size_t i = softmax_offset; i < g.size(); ++i) softmax_sum += std::abs(g[i]);
  CHECK(softmax_sum > 0.0);
}

TEST_CASE("evaluate counts argmax agreement over partial batches") {
  auto model = reference_model(8, 0.0, 3);
  model.initialize(2);
  // With the softmax at zero every row predicts class 0 (argmax of a tie takes the first).
  const std::size_t n = 7;
  std::vector<float> x(n * 3, 0.5f), y(n * 10, 0.0f);
  for (std::size_t i = 0; i < n; ++i) y[i * 10 + (i < 3 ? 0 : 1)] = 1.0f;
  const auto result = model.evaluate(ConstMatrixMap(x.data(), n, 3), ConstMatrixMap(y.data(), n, 10), 2);
  CHECK(result.count == n);
  CHECK(result.accuracy == doctest::Approx(3.0 / 7.0));
  CHECK(result.loss == doctest::Approx(std::log(10.0)).epsilon(1e-5));
}
