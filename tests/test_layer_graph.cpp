// Models written in Thinc's model language: how [model] sections read, render and build.
#include <doctest/doctest.h>

#include <string>

#include "io/config.hpp"
#include "model/layer_registry.hpp"
#include "model/model.hpp"
#include "tests/gradient_check.hpp"

using namespace psgrad;

namespace {

const std::string kTutorialInThincLayers = R"([model]
@layers = "chain.v1"
[model.*.relu1]
@layers = "Relu.v1"
nO = 128
dropout = 0.2
[model.*.relu2]
@layers = "Relu.v1"
nO = 128
dropout = 0.2
[model.*.softmax]
@layers = "Softmax.v1"
)";

Config parsed(const std::string& text, const std::string& source = "model.cfg") {
  auto config = parse_config(text, source);
  REQUIRE_MESSAGE(config.ok(), config.error());
  return std::move(config).value();
}

std::string refusal(const std::string& text, const std::string& source = "model.cfg") {
  auto config = parse_config(text, source);
  REQUIRE_FALSE(config.ok());
  return config.error();
}

std::vector<std::string> positional_keys(const LayerSpec& spec) {
  std::vector<std::string> keys;
  for (const auto& [key, layer] : spec.positional) keys.push_back(key);
  return keys;
}

}  // namespace

TEST_CASE("the tutorial's model written with Thinc's layers builds the same model as relu_relu_softmax.v1") {
  const auto config = parsed(kTutorialInThincLayers);
  CHECK(config.model.architecture == "chain.v1");
  auto graph = Model::build(config.model, 784, 10).value();
  auto registered = Model::build("relu_relu_softmax.v1", {{"hidden_width", std::int64_t{128}}, {"dropout", 0.2}}, 784, 10).value();
  CHECK(graph.layout().describe() == registered.layout().describe());
  graph.initialize(3);
  registered.initialize(3);
  CHECK(graph.weights() == registered.weights());
  // The same dropout draws and the same gradient: the two are one model.
  const auto inputs = testing::random_values(16 * 784, 5);
  std::vector<float> targets(16 * 10, 0.0f);
  for (int row = 0; row < 16; ++row) targets[static_cast<std::size_t>(row * 10 + row % 10)] = 1.0f;
  Random first(9), second(9);
  const ConstMatrixMap x(inputs.data(), 16, 784), y(targets.data(), 16, 10);
  CHECK(graph.compute_gradients(x, y, first) == registered.compute_gradients(x, y, second));
  CHECK(graph.gradients() == registered.gradients());
}

TEST_CASE("positional layers keep the order they were written in, in Thinc's format and in TOML") {
  const auto thinc = parsed(R"([model]
@layers = "chain.v1"
[model.*.zeta]
@layers = "Relu.v1"
nO = 8
[model.*.alpha]
@layers = "Softmax.v1"
)");
  CHECK(positional_keys(thinc.model.graph) == std::vector<std::string>{"zeta", "alpha"});
  const auto toml = parsed(R"([model]
"@layers" = "chain.v1"
[model."*".zeta]
"@layers" = "Relu.v1"
nO = 8
[model."*".alpha]
"@layers" = "Softmax.v1"
)", "model.toml");
  CHECK(positional_keys(toml.model.graph) == std::vector<std::string>{"zeta", "alpha"});
  CHECK(toml.model.graph == thinc.model.graph);
}

TEST_CASE("a rendered layer graph reads back as the same graph in both formats") {
  const auto config = parsed(R"([model]
@layers = "chain.v1"
[model.*.hidden]
@layers = "Maxout.v1"
nO = 32
nP = 2
normalize = true
[model.*.block]
@layers = "residual.v1"
[model.*.block.layer]
@layers = "clone.v1"
n = 2
[model.*.block.layer.orig]
@layers = "Mish.v1"
nO = 32
[model.*.both]
@layers = "add.v1"
[model.*.both.layer1]
@layers = "Gelu.v1"
nO = 16
[model.*.both.layer2]
@layers = "noop.v1"
[model.*.both.*]
[model.*.out]
@layers = "Softmax.v2"
)");
  for (const auto format : {ConfigFormat::thinc, ConfigFormat::toml}) {
    const auto text = render_config(config, format);
    const auto again = parsed(text, format == ConfigFormat::thinc ? "again.cfg" : "again.toml");
    CHECK_MESSAGE(again.model.graph == config.model.graph, text);
  }
  // Only what was written is rendered: Thinc's defaults stay Thinc's.
  CHECK(render_config(config, ConfigFormat::thinc).find("dropout") == std::string::npos);
}

TEST_CASE("an unknown layer is refused in one line that names it and lists the layers psgrad has") {
  const auto error = refusal("[model]\n@layers = \"chain.v1\"\n[model.*.a]\n@layers = \"LSTM.v1\"\n");
  CHECK(error.find("model.cfg:4: model.*.a.@layers: unknown layer \"LSTM.v1\"") == 0);
  CHECK(error.find("Maxout.v1") != std::string::npos);
  CHECK(error.find("residual.v1") != std::string::npos);
  CHECK(error.find('\n') == std::string::npos);
}

TEST_CASE("a layer's unknown argument and a combinator without its layer are refused at their section") {
  CHECK(refusal("[model]\n@layers = \"Relu.v1\"\nwidth = 3\n").find("model.cfg:3: model.width: unknown key") == 0);
  CHECK(refusal("[model]\n@layers = \"residual.v1\"\n").find("residual.v1 needs its layer 'layer'") != std::string::npos);
  CHECK(refusal("[model]\n@layers = \"chain.v1\"\n").find("chain.v1 needs at least 1 layer") != std::string::npos);
  CHECK(refusal("[model]\n@layers = \"Maxout.v1\"\nnP = 0\n").find("model.nP: expected") != std::string::npos);
}

TEST_CASE("a graph is refused when its widths cannot fit or it does not end in Softmax") {
  auto residual = parsed("[model]\n@layers = \"chain.v1\"\n[model.*.r]\n@layers = \"residual.v1\"\n"
                         "[model.*.r.layer]\n@layers = \"Relu.v1\"\nnO = 5\n[model.*.out]\n@layers = \"Softmax.v1\"\n");
  auto built = Model::build(residual.model, 6, 3);
  REQUIRE_FALSE(built.ok());
  CHECK(built.error().find("model.*.r: residual.v1: its layer gives 5 features for 6 coming in") == 0);
  auto relu_last = parsed("[model]\n@layers = \"Relu.v1\"\nnO = 3\n");
  built = Model::build(relu_last.model, 6, 3);
  REQUIRE_FALSE(built.ok());
  CHECK(built.error().find("the last layer must be Softmax.v1, Softmax.v2 or softmax_activation.v1") != std::string::npos);
  auto wrong_input = parsed("[model]\n@layers = \"chain.v1\"\n[model.*.a]\n@layers = \"Relu.v1\"\nnI = 5\nnO = 4\n"
                            "[model.*.b]\n@layers = \"Softmax.v1\"\n");
  built = Model::build(wrong_input.model, 6, 3);
  REQUIRE_FALSE(built.ok());
  CHECK(built.error().find("model.*.a: Relu.v1: nI = 5, but what comes in has 6 features") == 0);
}

TEST_CASE("a layer without nO takes the data's width, as Thinc's chain gives it") {
  auto config = parsed("[model]\n@layers = \"chain.v1\"\n[model.*.a]\n@layers = \"Relu.v1\"\n"
                       "[model.*.b]\n@layers = \"Softmax.v1\"\n");
  auto model = Model::build(config.model, 6, 3).value();
  CHECK(model.layout().describe() == "relu1.W 3x6 @0\nrelu1.b 1x3 @18\nsoftmax1.W 3x3 @21\nsoftmax1.b 1x3 @30\n");
}

TEST_CASE("combinators declare their layers' parameters under their own names") {
  auto config = parsed("[model]\n@layers = \"chain.v1\"\n[model.*.r]\n@layers = \"residual.v1\"\n"
                       "[model.*.r.layer]\n@layers = \"LayerNorm.v1\"\n[model.*.out]\n@layers = \"Softmax.v1\"\n");
  auto model = Model::build(config.model, 4, 2).value();
  CHECK(model.layout().describe() ==
        "residual1.layernorm1.G 1x4 @0\nresidual1.layernorm1.b 1x4 @4\nsoftmax1.W 2x4 @8\nsoftmax1.b 1x2 @16\n");
}
