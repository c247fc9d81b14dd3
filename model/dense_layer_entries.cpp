// Thinc's dense layers: Linear, Relu, Maxout, Mish, Swish, Gelu, HardSwish, Sigmoid, Softmax v1/v2,
// LayerNorm, Dropout and softmax_activation, with Thinc's arguments and defaults.
#include "model/layer_entries.hpp"

#include <fmt/format.h>

#include "model/activations.hpp"
#include "model/dropout.hpp"
#include "model/layer_norm.hpp"
#include "model/maxout.hpp"
#include "model/relu.hpp"
#include "model/softmax.hpp"
#include "model/softmax_activation.hpp"

namespace psgrad {

namespace {

SettingSpec width_argument(const char* name, const char* description) {
  return {name, SettingKind::integer, SettingValue{std::int64_t{0}}, description, 1.0, 1 << 24};
}
SettingSpec output_width_argument() {
  return width_argument("nO", "Output width; not set: the number of classes, for the model's last layer.");
}
SettingSpec input_width_argument() {
  return width_argument("nI", "Input width; not set: the width of what comes in.");
}
SettingSpec dropout_argument() {
  return {"dropout", SettingKind::number, SettingValue{0.0}, "Dropout after the activation while training.", 0.0,
          1.0, true};
}
SettingSpec normalize_argument() {
  return {"normalize", SettingKind::boolean, SettingValue{false}, "LayerNorm after the activation."};
}

// nI, when written, must be what comes in: psgrad infers it, and a different one is a mistake.
Status check_input_width(const LayerSpec& spec, const Settings& arguments, std::size_t input_width) {
  const auto written = get_integer(arguments, "nI");
  if (written != 0 && static_cast<std::size_t>(written) != input_width)
    return layer_error(spec, fmt::format("nI = {}, but what comes in has {} features", written, input_width));
  return success();
}

Result<std::size_t> output_width_of(const LayerSpec& spec, const Settings& arguments,
                                    std::optional<std::size_t> output_width) {
  const auto written = get_integer(arguments, "nO");
  if (written != 0) return static_cast<std::size_t>(written);
  if (output_width) return *output_width;
  return layer_error(spec, "nO is not set; only the model's last layer takes its width from the data (the "
                           "number of classes)");
}

// Relu, Maxout, Mish, ...: the layer, then LayerNorm with normalize, then Dropout with dropout, as Thinc.
template <class Make>
Result<LayerList> hidden_layers(const LayerSpec& spec, const Settings& arguments, std::size_t input_width,
                                std::optional<std::size_t> output_width, Make make) {
  if (auto checked = check_input_width(spec, arguments, input_width); !checked) return Error{checked.error()};
  auto width = output_width_of(spec, arguments, output_width);
  if (!width) return Error{width.error()};
  LayerList layers;
  layers.push_back(make(*width, arguments));
  const auto has = [&](const char* name) { return arguments.count(name) > 0; };
  if (has("normalize") && get_boolean(arguments, "normalize")) layers.push_back(std::make_unique<LayerNorm>(*width));
  if (has("dropout") && get_number(arguments, "dropout") > 0.0)
    layers.push_back(std::make_unique<Dropout>(*width, static_cast<float>(get_number(arguments, "dropout"))));
  return layers;
}

template <class DenseLayer>
LayerEntry dense_entry(const char* name, const char* description, bool hidden) {
  LayerEntry entry;
  entry.name = name;
  entry.description = description;
  entry.arguments = {output_width_argument(), input_width_argument()};
  if (hidden) {
    entry.arguments.push_back(dropout_argument());
    entry.arguments.push_back(normalize_argument());
  }
  entry.initializer_arguments = {"init_W", "init_b"};
  entry.build = [](const LayerSpec& spec, const Settings& arguments, std::size_t input_width,
                   std::optional<std::size_t> output_width, const ChildBuilder&) -> Result<LayerList> {
    auto chosen = array_initializers(spec, 2, 1);  // W (nO, nI), b (nO)
    if (!chosen) return layer_error(spec, chosen.error());
    return hidden_layers(spec, arguments, input_width, output_width, [&](std::size_t width, const Settings&) {
      return std::unique_ptr<Layer>(std::make_unique<DenseLayer>(width, input_width, *chosen));
    });
  };
  return entry;
}

LayerEntry maxout_entry() {
  auto entry = dense_entry<Relu>("Maxout.v1", "Maxout: the largest of nP linear pieces per output.", true);
  entry.arguments.insert(entry.arguments.begin() + 2, SettingSpec{"nP", SettingKind::integer, SettingValue{std::int64_t{3}},
                                                                  "Pieces per output.", 1.0, 1 << 16});
  entry.build = [](const LayerSpec& spec, const Settings& arguments, std::size_t input_width,
                   std::optional<std::size_t> output_width, const ChildBuilder&) -> Result<LayerList> {
    auto chosen = array_initializers(spec, 3, 2);  // W (nO, nP, nI), b (nO, nP)
    if (!chosen) return layer_error(spec, chosen.error());
    return hidden_layers(spec, arguments, input_width, output_width, [&](std::size_t width, const Settings& given) {
      const auto pieces = static_cast<std::size_t>(get_integer(given, "nP"));
      return std::unique_ptr<Layer>(std::make_unique<Maxout>(width, input_width, pieces, *chosen));
    });
  };
  return entry;
}

LayerEntry softmax_v2_entry() {
  auto entry = dense_entry<Softmax>("Softmax.v2", "Softmax output layer, with Softmax.v2's arguments.", false);
  entry.arguments.push_back({"normalize_outputs", SettingKind::boolean, SettingValue{true},
                             "Whether predictions are probabilities (psgrad evaluates them: true only)."});
  entry.arguments.push_back({"temperature", SettingKind::number, SettingValue{1.0},
                             "Divides the logits (psgrad: 1.0 only).", 0.0, std::nullopt, false, true});
  const auto build = entry.build;
  entry.build = [build](const LayerSpec& spec, const Settings& arguments, std::size_t input_width,
                        std::optional<std::size_t> output_width, const ChildBuilder& child) -> Result<LayerList> {
    if (!get_boolean(arguments, "normalize_outputs"))
      return layer_error(spec, "normalize_outputs = false is not supported: psgrad evaluates probabilities");
    if (get_number(arguments, "temperature") != 1.0)
      return layer_error(spec, "a temperature other than 1.0 is not supported");
    return build(spec, arguments, input_width, output_width, child);
  };
  return entry;
}

LayerEntry layer_norm_entry() {
  LayerEntry entry;
  entry.name = "LayerNorm.v1";
  entry.description = "Layer normalization with a learned scale G and shift b.";
  entry.arguments = {input_width_argument()};
  entry.build = [](const LayerSpec& spec, const Settings& arguments, std::size_t input_width,
                   std::optional<std::size_t>, const ChildBuilder&) -> Result<LayerList> {
    if (auto checked = check_input_width(spec, arguments, input_width); !checked) return Error{checked.error()};
    LayerList layers;
    layers.push_back(std::make_unique<LayerNorm>(input_width));
    return layers;
  };
  return entry;
}

LayerEntry dropout_entry() {
  LayerEntry entry;
  entry.name = "Dropout.v1";
  entry.description = "Inverted dropout while training.";
  entry.arguments = {{"rate", SettingKind::number, SettingValue{0.0}, "Share of units dropped.", 0.0, 1.0, true}};
  entry.build = [](const LayerSpec&, const Settings& arguments, std::size_t input_width, std::optional<std::size_t>,
                   const ChildBuilder&) -> Result<LayerList> {
    LayerList layers;
    layers.push_back(std::make_unique<Dropout>(input_width, static_cast<float>(get_number(arguments, "rate"))));
    return layers;
  };
  return entry;
}

// softmax_activation: a model may end in it, after SparseLinear or Linear.
LayerEntry softmax_activation_entry() {
  LayerEntry entry;
  entry.name = "softmax_activation.v1";
  entry.description = "Softmax of its input, no parameters.";
  entry.build = [](const LayerSpec&, const Settings&, std::size_t input_width, std::optional<std::size_t>,
                   const ChildBuilder&) -> Result<LayerList> {
    LayerList layers;
    layers.push_back(std::make_unique<SoftmaxOnly>(input_width));
    return layers;
  };
  return entry;
}


}  // namespace

std::vector<LayerEntry> dense_layer_entries() {
  return {
      dense_entry<Linear>("Linear.v1", "X·Wᵀ + b.", false),
      dense_entry<Relu>("Relu.v1", "Dense layer with a rectified linear activation.", true),
      maxout_entry(),
      dense_entry<Mish>("Mish.v1", "Dense layer with the Mish activation.", true),
      dense_entry<Swish>("Swish.v1", "Dense layer with the Swish activation.", true),
      dense_entry<Gelu>("Gelu.v1", "Dense layer with the GELU activation.", true),
      dense_entry<HardSwish>("HardSwish.v1", "Dense layer with the hard Swish activation.", true),
      dense_entry<Sigmoid>("Sigmoid.v1", "Dense layer with a logistic activation.", false),
      dense_entry<Softmax>("Softmax.v1", "Softmax output layer.", false),
      softmax_v2_entry(),
      layer_norm_entry(),
      dropout_entry(),
      softmax_activation_entry(),
  };
}

}  // namespace psgrad
