// Adam.v1 and SGD.v1 against values computed by hand from Thinc's formulas.
#include <doctest/doctest.h>

#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <thread>
#include <vector>

#include "model/adam.hpp"
#include "model/finite.hpp"
#include "model/registry.hpp"
#include "model/sgd.hpp"
#include "model/two_part_runner.hpp"

using namespace psgrad;

namespace {

ParameterLayout two_arrays() {
  ParameterLayout layout;
  layout.add("a", "W", 1, 2);
  layout.add("a", "b", 1, 1);
  return layout;
}

// One Adam step on one array, done by hand in double with Thinc's formulas.
struct HandAdam {
  double lr = 0.001, b1 = 0.9, b2 = 0.999, eps = 1e-8, clip = 1.0, decay = 0.0;
  std::vector<double> m, v;
  int t = 0;
  void step(std::vector<double>& w, std::vector<double> g) {
    if (m.empty()) m.assign(w.size(), 0.0), v.assign(w.size(), 0.0);
    double norm = 0;
    for (double x : g) norm += x * x;
    norm = std::sqrt(norm);
    if (clip > 0 && norm >= clip)
      for (double& x : g) x *= clip / norm;
    ++t;
    const double lr_t = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
    for (std::size_t i = 0; i < w.size(); ++i) {
      m[i] = b1 * m[i] + (1 - b1) * g[i];
      v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
      w[i] -= lr_t * m[i] / (std::sqrt(v[i]) + eps);
      w[i] -= lr * decay * w[i];
    }
  }
};

void check_close(const float* actual, const std::vector<double>& expected) {
  for (std::size_t i = 0; i < expected.size(); ++i)
    CHECK(double(actual[i]) == doctest::Approx(expected[i]).epsilon(1e-5));
}

}  // namespace

TEST_CASE("adam matches hand-computed steps with and without clipping") {
  const auto layout = two_arrays();
  Adam adam(AdamSettings{}, layout);
  std::vector<float> w = {0.5f, -0.25f, 0.1f};
  HandAdam hand_w, hand_b;
  std::vector<double> expected_w = {0.5, -0.25}, expected_b = {0.1};
  // W's gradient norm is 5 (clipped to 1) then 0.5 (not clipped); b's is small then large.
  const std::vector<std::vector<float>> gradients = {{3.0f, 4.0f, 0.2f}, {0.3f, -0.4f, -2.0f}, {0.0f, 0.1f, 0.05f}};
  for (const auto& g : gradients) {
    adam.apply_gradients(w.data(), g.data());
    hand_w.step(expected_w, {g[0], g[1]});
    hand_b.step(expected_b, {g[2]});
    check_close(w.data(), expected_w);
    check_close(w.data() + 2, expected_b);
  }
  // The first step of Adam moves each weight by about lr whatever the gradient's size.
  CHECK(adam.step_count(0) == 3);
  CHECK(adam.step_count(1) == 3);
}

TEST_CASE("adam clips each parameter array by its own norm") {
  ParameterLayout layout;
  layout.add("a", "W", 1, 2);
  layout.add("b", "W", 1, 2);
  AdamSettings settings;
  settings.beta1 = 0.0;  // m = g, so the step reveals the clipped gradient's direction
  settings.beta2 = 0.0;
  Adam adam(settings, layout);
  std::vector<float> w(4, 0.0f);
  const std::vector<float> g = {30.0f, 40.0f, 0.03f, 0.04f};
  adam.apply_gradients(w.data(), g.data());
  // With beta1 = beta2 = 0: w = -lr * g / (|g| + eps) elementwise, unaffected by the other array.
  CHECK(w[0] == doctest::Approx(-0.001).epsilon(1e-4));
  CHECK(w[3] == doctest::Approx(-0.001 * 0.04 / (0.04 + 1e-8)).epsilon(1e-4));
}

TEST_CASE("adam with a zero gradient still counts the step") {
  const auto layout = two_arrays();
  Adam adam(AdamSettings{}, layout);
  std::vector<float> w = {1.0f, 2.0f, 3.0f};
  const std::vector<float> zero(3, 0.0f);
  adam.apply_gradients(w.data(), zero.data());
  CHECK(w == std::vector<float>{1.0f, 2.0f, 3.0f});
  CHECK(adam.step_count(0) == 1);
  // The second step's bias correction uses t = 2.
  const std::vector<float> g = {0.5f, 0.0f, 0.0f};
  adam.apply_gradients(w.data(), g.data());
  HandAdam hand;
  std::vector<double> expected = {1.0, 2.0};
  hand.step(expected, {0.0, 0.0});
  hand.step(expected, {0.5, 0.0});
  check_close(w.data(), expected);
}

TEST_CASE("adam weight decay is decoupled: w -= lr * L2 * w after the step") {
  const auto layout = two_arrays();
  AdamSettings settings;
  settings.L2 = 0.1;
  Adam adam(settings, layout);
  std::vector<float> w = {1.0f, -2.0f, 0.5f};
  const std::vector<float> g = {0.1f, 0.2f, 0.0f};
  adam.apply_gradients(w.data(), g.data());
  HandAdam hand;
  hand.decay = 0.1;
  std::vector<double> expected = {1.0, -2.0};
  hand.step(expected, {0.1, 0.2});
  check_close(w.data(), expected);
  CHECK(double(w[2]) == doctest::Approx(0.5 * (1 - 0.001 * 0.1)).epsilon(1e-6));
}

TEST_CASE("adam averages follow Thinc's EMA from zero") {
  ParameterLayout layout;
  layout.add("a", "W", 1, 1);
  AdamSettings settings;
  settings.use_averages = true;
  Adam adam(settings, layout);
  std::vector<float> w = {1.0f};
  const std::vector<float> g = {0.5f};
  double ema = 0.0;
  for (int t = 1; t <= 3; ++t) {
    adam.apply_gradients(w.data(), g.data());
    const double decay = std::min((1.0 + t) / (10.0 + t), 0.9999);
    ema -= (1 - decay) * (ema - double(w[0]));
    CHECK(double(adam.averages()[0]) == doctest::Approx(ema).epsilon(1e-6));
  }
  Adam without(AdamSettings{}, layout);
  CHECK(without.averages() == nullptr);
}

TEST_CASE("adam state round-trips so a restored optimizer continues identically") {
  const auto layout = two_arrays();
  Adam first(AdamSettings{}, layout), second(AdamSettings{}, layout);
  std::vector<float> w1 = {0.1f, 0.2f, 0.3f};
  const std::vector<float> g = {0.4f, -0.3f, 0.2f};
  first.apply_gradients(w1.data(), g.data());
  REQUIRE(second.set_state(first.state()));
  std::vector<float> w2 = w1;
  first.apply_gradients(w1.data(), g.data());
  second.apply_gradients(w2.data(), g.data());
  CHECK(w1 == w2);
  ParameterLayout other;
  other.add("x", "W", 2, 2);
  Adam mismatched(AdamSettings{}, other);
  CHECK_FALSE(mismatched.set_state(first.state()));
}

TEST_CASE("sgd steps by learn_rate times the clipped gradient") {
  const auto layout = two_arrays();
  SgdSettings settings;
  settings.learn_rate = 0.5;
  Sgd sgd(settings, layout);
  std::vector<float> w = {0.0f, 0.0f, 1.0f};
  const std::vector<float> g = {3.0f, 4.0f, 0.5f};
  sgd.apply_gradients(w.data(), g.data());
  CHECK(w[0] == doctest::Approx(-0.5 * 0.6));
  CHECK(w[1] == doctest::Approx(-0.5 * 0.8));
  CHECK(w[2] == doctest::Approx(1.0 - 0.25));
}

TEST_CASE("the optimizer registry builds Adam.v1 with Thinc's defaults") {
  const auto entry = find_optimizer("Adam.v1");
  REQUIRE(entry != nullptr);
  Settings settings;
  REQUIRE_FALSE(fill_defaults(entry->settings, settings).has_value());
  CHECK(get_number(settings, "learn_rate") == 0.001);
  CHECK(get_number(settings, "beta1") == 0.9);
  CHECK(get_number(settings, "beta2") == 0.999);
  CHECK(get_number(settings, "eps") == 1e-8);
  CHECK(get_number(settings, "L2") == 0.0);
  CHECK(get_number(settings, "grad_clip") == 1.0);
  CHECK(get_boolean(settings, "L2_is_weight_decay"));
  CHECK(get_boolean(settings, "use_averages"));  // Thinc's Adam.v1 keeps averages by default
  CHECK(entry->build(settings, two_arrays())->name() == "Adam.v1");
  Settings sgd_settings;
  CHECK(fill_defaults(find_optimizer("SGD.v1")->settings, sgd_settings) == std::optional<std::string>("learn_rate"));
}

TEST_CASE("a step with a non-finite gradient or result is reported as not finite") {
  const auto layout = two_arrays();
  std::vector<float> w = {0.5f, -0.25f, 0.1f};
  Adam adam(AdamSettings{}, layout);
  const std::vector<float> fine = {0.1f, 0.2f, 0.3f};
  adam.apply_gradients(w.data(), fine.data());
  CHECK(adam.last_step_finite());
  const std::vector<float> nan_gradient = {0.1f, std::nanf(""), 0.3f};
  adam.apply_gradients(w.data(), nan_gradient.data());
  CHECK_FALSE(adam.last_step_finite());
  // A finite gradient whose step overflows the weights.
  AdamSettings huge;
  huge.learn_rate = 1e38;
  huge.grad_clip = 0.0;
  Adam overflowing(huge, layout);
  std::vector<float> w2 = {3e38f, -3e38f, 1.0f};
  const std::vector<float> pushes_out = {-1.0f, 1.0f, 0.5f};
  overflowing.apply_gradients(w2.data(), pushes_out.data());
  CHECK_FALSE(overflowing.last_step_finite());
  Sgd sgd(SgdSettings{}, layout);
  std::vector<float> w3 = {0.5f, -0.25f, 0.1f};
  sgd.apply_gradients(w3.data(), fine.data());
  CHECK(sgd.last_step_finite());
  sgd.apply_gradients(w3.data(), nan_gradient.data());
  CHECK_FALSE(sgd.last_step_finite());
}

TEST_CASE("first_non_finite finds the first NaN or infinity") {
  std::vector<float> values(1000, 1.5f);
  CHECK_FALSE(first_non_finite(values.data(), values.size()));
  values[700] = INFINITY;
  values[900] = NAN;
  REQUIRE(first_non_finite(values.data(), values.size()));
  CHECK(*first_non_finite(values.data(), values.size()) == 700);
}

TEST_CASE("all_finite accepts every finite float and refuses NaN and both infinities") {
  const float finite[] = {0.0f, -0.0f, std::numeric_limits<float>::max(), std::numeric_limits<float>::lowest(),
                          std::numeric_limits<float>::denorm_min(), -std::numeric_limits<float>::min(), 1e-30f};
  CHECK(all_finite(finite, std::size(finite)));
  for (const float bad : {INFINITY, -INFINITY, NAN, -NAN}) {
    std::vector<float> values(37, 2.0f);  // not a multiple of a vector's width
    values[36] = bad;
    CHECK_FALSE(all_finite(values.data(), values.size()));
    CHECK(first_non_finite(values.data(), values.size()) == std::optional<std::size_t>{36});
  }
}

namespace {

// Runs the second half first, on a thread of its own: a step's result must not depend on either.
struct ReversedOnAnotherThread final : TwoPartRunner {
  int runs = 0;
  void run(const std::function<void(int)>& part) override {
    ++runs;
    std::thread other([&] { part(1); });
    other.join();
    part(0);
  }
};

}  // namespace

TEST_CASE("adam steps split in two halves give the same weights bit for bit") {
  // Arrays of several norm chunks, so the halves cut inside the first one.
  ParameterLayout layout;
  layout.add("l1", "W", 64, 300);
  layout.add("l1", "b", 1, 64);
  layout.add("l2", "W", 10, 64);
  std::vector<float> weights(layout.total_size()), first(layout.total_size()), second(layout.total_size());
  for (std::size_t i = 0; i < weights.size(); ++i) {
    weights[i] = std::sin(0.37f * static_cast<float>(i));
    first[i] = 0.05f * std::cos(0.11f * static_cast<float>(i));
    second[i] = 0.03f * std::sin(0.23f * static_cast<float>(i) + 1.0f);
  }
  Adam whole(AdamSettings{}, layout), split(AdamSettings{}, layout);
  ReversedOnAnotherThread runner;
  split.split_steps_with(&runner);
  auto whole_weights = weights, split_weights = weights;
  const float* both[] = {first.data(), second.data()};
  for (int step = 0; step < 5; ++step) {
    whole.apply_gradients(whole_weights.data(), whole_weights.data(), both, 2);
    split.apply_gradients(split_weights.data(), split_weights.data(), both, 2);
  }
  CHECK(runner.runs == 10);  // two passes a step
  CHECK(split_weights == whole_weights);
  CHECK(split.state().buffers == whole.state().buffers);
  CHECK_FALSE(split_weights == weights);
}

TEST_CASE("Adam's moments that decay below the smallest normal float become zero instead of subnormal") {
  ParameterLayout layout;
  layout.add("a", "W", 1, 2);
  AdamSettings settings;
  settings.grad_clip = 0.0;
  Adam adam(settings, layout);
  std::vector<float> weights{0.5f, 0.5f};
  // Weight 0 is active once, with a tiny gradient, then never again (a rarely active input); weight 1
  // always. Its first moment, 1e-31, decays by beta1 each step: below FLT_MIN after about 150 steps.
  std::vector<float> gradient{1e-30f, 1e-3f};
  adam.apply_gradients(weights.data(), gradient.data());
  gradient[0] = 0.0f;
  const auto first_moment = [&] { return adam.state().buffers[0]; };
  for (int step = 2; step <= 40; ++step) adam.apply_gradients(weights.data(), gradient.data());
  CHECK(std::fpclassify(first_moment()) == FP_NORMAL);  // 1e-31 x 0.9^39: still normal
  bool any_subnormal = false;
  for (int step = 41; step <= 300; ++step) {
    adam.apply_gradients(weights.data(), gradient.data());
    for (float value : adam.state().buffers) any_subnormal = any_subnormal || std::fpclassify(value) == FP_SUBNORMAL;
  }
  CHECK_FALSE(any_subnormal);
  CHECK(first_moment() == 0.0f);
  CHECK(adam.state().buffers[1] != 0.0f);  // the active weight's moment is untouched
  CHECK(std::isfinite(weights[0]));
}
