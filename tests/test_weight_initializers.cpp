// A layer's init_W and init_b sections: Thinc's registered initializers, read, rendered and drawn by
// Thinc 8.1.7's definitions (thinc/initializers.py), and refused in one line where they do not fit.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "model/model.hpp"
#include "model/weight_initializer.hpp"

using namespace psgrad;

namespace {

Config parsed(const std::string& text, const std::string& source = "model.cfg") {
  auto config = parse_config(text, source);
  REQUIRE_MESSAGE(config.ok(), config.error());
  return std::move(config).value();
}

std::string refusal(const std::string& text) {
  auto config = parse_config(text, "model.cfg");
  REQUIRE_FALSE(config.ok());
  return config.error();
}

// One Relu (nO 64 from 100 inputs) with the given init sections, then Softmax.
std::string relu_with(const std::string& init_sections) {
  return "[model]\n@layers = \"chain.v1\"\n[model.*.relu]\n@layers = \"Relu.v1\"\nnO = 64\n" + init_sections +
         "[model.*.out]\n@layers = \"Softmax.v1\"\n";
}

// The initial values of one array ("W" or "b") of the model's first layer.
std::vector<float> first_layer_array(const Config& config, const std::string& name, std::size_t inputs = 100) {
  auto model = Model::build(config.model, inputs, 10).value();
  model.initialize(7);
  const auto& layout = model.layout();
  for (std::size_t i = 0; i < layout.array_count(); ++i)
    if (layout[i].name == name)
      return {model.weights().begin() + static_cast<std::ptrdiff_t>(layout[i].offset),
              model.weights().begin() + static_cast<std::ptrdiff_t>(layout[i].offset + layout[i].size())};
  FAIL("no array " << name);
  return {};
}

double largest_magnitude(const std::vector<float>& values) {
  double largest = 0.0;
  for (const auto v : values) largest = std::max(largest, static_cast<double>(std::fabs(v)));
  return largest;
}

double spread(const std::vector<float>& values) {
  double sum = 0.0, squares = 0.0;
  for (const auto v : values) {
    sum += v;
    squares += static_cast<double>(v) * v;
  }
  const double mean = sum / static_cast<double>(values.size());
  return std::sqrt(squares / static_cast<double>(values.size()) - mean * mean);
}

}  // namespace

TEST_CASE("init_W and init_b sections choose a dense layer's initializers by Thinc's names") {
  const auto config = parsed(relu_with("[model.*.relu.init_W]\n@initializers = \"zero_init.v1\"\n"
                                       "[model.*.relu.init_b]\n@initializers = \"uniform_init.v1\"\nlo = 0.5\nhi = 0.6\n"));
  const auto w = first_layer_array(config, "W");
  CHECK(std::all_of(w.begin(), w.end(), [](float v) { return v == 0.0f; }));
  const auto b = first_layer_array(config, "b");
  REQUIRE(b.size() == 64);
  CHECK(std::all_of(b.begin(), b.end(), [](float v) { return v >= 0.5f && v <= 0.6f; }));
  CHECK(*std::min_element(b.begin(), b.end()) != *std::max_element(b.begin(), b.end()));
  // Without the sections, Relu's own: W Glorot-uniform, b zero.
  const auto plain = parsed(relu_with(""));
  CHECK(largest_magnitude(first_layer_array(plain, "W")) > 0.0);
  const auto plain_b = first_layer_array(plain, "b");
  CHECK(std::all_of(plain_b.begin(), plain_b.end(), [](float v) { return v == 0.0f; }));
}

TEST_CASE("fan-scaled initializers draw by W's shape (nO, nI), as Thinc's do") {
  // Uniform kinds reach close to their bound and never past it; normal kinds have their spread.
  const double fan_in = 100.0, fan_out = 64.0;
  struct Expected {
    const char* name;
    double bound;  // uniform: U(-bound, bound); normal: N(0, bound)
    bool uniform;
  };
  for (const auto& expected : {Expected{"glorot_uniform_init.v1", std::sqrt(6.0 / (fan_out + fan_in)), true},
                               Expected{"he_uniform_init.v1", std::sqrt(6.0 / fan_in), true},
                               Expected{"lecun_uniform_init.v1", std::sqrt(3.0 / fan_in), true},
                               Expected{"glorot_normal_init.v1", std::sqrt(2.0 / (fan_out + fan_in)), false},
                               Expected{"he_normal_init.v1", std::sqrt(2.0 / fan_in), false},
                               Expected{"lecun_normal_init.v1", std::sqrt(1.0 / fan_in), false}}) {
    CAPTURE(expected.name);
    const auto config =
        parsed(relu_with(std::string("[model.*.relu.init_W]\n@initializers = \"") + expected.name + "\"\n"));
    const auto w = first_layer_array(config, "W");
    REQUIRE(w.size() == 6400);
    if (expected.uniform) {
      CHECK(largest_magnitude(w) <= expected.bound);
      CHECK(largest_magnitude(w) > 0.99 * expected.bound);
      CHECK(spread(w) == doctest::Approx(expected.bound / std::sqrt(3.0)).epsilon(0.05));
    } else {
      CHECK(spread(w) == doctest::Approx(expected.bound).epsilon(0.05));
    }
  }
}

TEST_CASE("Maxout's init_W scales by its shape (nO, nP, nI), whose second axis is nP, as in Thinc") {
  const auto config = parsed(
      "[model]\n@layers = \"chain.v1\"\n[model.*.maxout]\n@layers = \"Maxout.v1\"\nnO = 32\nnP = 4\n"
      "[model.*.maxout.init_W]\n@initializers = \"he_uniform_init.v1\"\n"
      "[model.*.maxout.init_b]\n@initializers = \"glorot_uniform_init.v1\"\n[model.*.out]\n@layers = \"Softmax.v1\"\n");
  const auto w = first_layer_array(config, "W");
  REQUIRE(w.size() == 32 * 4 * 100);
  CHECK(largest_magnitude(w) <= std::sqrt(6.0 / 4.0));
  CHECK(largest_magnitude(w) > 0.99 * std::sqrt(6.0 / 4.0));
  // b is (nO, nP): two axes, so fan-scaled kinds apply.
  const auto b = first_layer_array(config, "b");
  REQUIRE(b.size() == 32 * 4);
  CHECK(largest_magnitude(b) <= std::sqrt(6.0 / 36.0));
  CHECK(largest_magnitude(b) > 0.9 * std::sqrt(6.0 / 36.0));
}

TEST_CASE("normal_init takes Thinc's `mean` as the standard deviation, so its default draws zeros") {
  const auto zeros = parsed(relu_with("[model.*.relu.init_W]\n@initializers = \"normal_init.v1\"\n"));
  const auto w = first_layer_array(zeros, "W");
  CHECK(std::all_of(w.begin(), w.end(), [](float v) { return v == 0.0f; }));
  const auto spread_out = parsed(relu_with("[model.*.relu.init_W]\n@initializers = \"normal_init.v1\"\nmean = 0.5\n"));
  CHECK(spread(first_layer_array(spread_out, "W")) == doctest::Approx(0.5).epsilon(0.05));
}

TEST_CASE("initializer sections render as written and read back the same, in both formats") {
  const auto config = parsed(relu_with("[model.*.relu.init_W]\n@initializers = \"he_normal_init.v1\"\n"
                                       "[model.*.relu.init_b]\n@initializers = \"uniform_init.v1\"\nhi = 0.2\n"));
  REQUIRE(config.model.graph.positional.size() == 2);
  CHECK(config.model.graph.positional[0].second.initializers.size() == 2);
  for (const auto format : {ConfigFormat::thinc, ConfigFormat::toml}) {
    const auto text = render_config(config, format);
    const auto again = parsed(text, format == ConfigFormat::thinc ? "again.cfg" : "again.toml");
    CHECK_MESSAGE(again.model.graph == config.model.graph, text);
    // Only what was written: uniform_init's lo stays Thinc's default.
    CHECK(text.find("lo =") == std::string::npos);
  }
}

TEST_CASE("an initializer that does not fit is refused in one line naming the section and what fits") {
  auto error = refusal(relu_with("[model.*.relu.init_W]\n@initializers = \"orthogonal_init.v1\"\n"));
  CHECK(error.find("model.*.relu.init_W.@initializers: unknown initializer \"orthogonal_init.v1\"") != std::string::npos);
  CHECK(error.find("he_normal_init.v1") != std::string::npos);
  error = refusal(relu_with("[model.*.relu.init_W]\n@initializers = \"zero_init.v1\"\nlo = 1\n"));
  CHECK(error.find("lo") != std::string::npos);
  CHECK(error.find("model.*.relu.init_W") != std::string::npos);
  error = refusal(relu_with("[model.*.relu.init_W]\nlo = 1\n"));
  CHECK(error.find("expected \"@initializers\"") != std::string::npos);
  // b of a dense layer has one axis: Thinc's fan-scaled initializers index its second and fail.
  auto config = parsed(relu_with("[model.*.relu.init_b]\n@initializers = \"he_normal_init.v1\"\n"));
  const auto built = Model::build(config.model, 100, 10);
  REQUIRE_FALSE(built.ok());
  CHECK(built.error().find("init_b: he_normal_init.v1 scales by the array's first two axes") != std::string::npos);
  // LayerNorm takes no initializer sections.
  error = refusal("[model]\n@layers = \"chain.v1\"\n[model.*.norm]\n@layers = \"LayerNorm.v1\"\n"
                  "[model.*.norm.init_W]\n@initializers = \"zero_init.v1\"\n[model.*.out]\n@layers = \"Softmax.v1\"\n");
  CHECK(error.find("LayerNorm.v1 takes no section 'init_W'") != std::string::npos);
  CHECK(std::count(error.begin(), error.end(), '\n') == 0);
}
