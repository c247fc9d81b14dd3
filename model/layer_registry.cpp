#include "model/layer_registry.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model/activations.hpp"
#include "model/dropout.hpp"
#include "model/expand_window.hpp"
#include "model/layer_norm.hpp"
#include "model/maxout.hpp"
#include "model/named_registry.hpp"
#include "model/relu.hpp"
#include "model/softmax.hpp"
#include "model/softmax_activation.hpp"

namespace psgrad {

namespace {

// Where a spec is, for messages: its config path, or its name when it has none.
std::string where(const LayerSpec& spec) { return spec.path.empty() ? spec.name : spec.path; }

Error layer_error(const LayerSpec& spec, const std::string& problem) {
  return Error{fmt::format("{}: {}: {}", where(spec), spec.name, problem)};
}

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
  entry.build = [](const LayerSpec& spec, const Settings& arguments, std::size_t input_width,
                   std::optional<std::size_t> output_width, const ChildBuilder&) {
    return hidden_layers(spec, arguments, input_width, output_width, [&](std::size_t width, const Settings&) {
      return std::unique_ptr<Layer>(std::make_unique<DenseLayer>(width, input_width));
    });
  };
  return entry;
}

LayerEntry maxout_entry() {
  auto entry = dense_entry<Relu>("Maxout.v1", "Maxout: the largest of nP linear pieces per output.", true);
  entry.arguments.insert(entry.arguments.begin() + 2, SettingSpec{"nP", SettingKind::integer, SettingValue{std::int64_t{3}},
                                                                  "Pieces per output.", 1.0, 1 << 16});
  entry.build = [](const LayerSpec& spec, const Settings& arguments, std::size_t input_width,
                   std::optional<std::size_t> output_width, const ChildBuilder&) {
    return hidden_layers(spec, arguments, input_width, output_width, [&](std::size_t width, const Settings& given) {
      const auto pieces = static_cast<std::size_t>(get_integer(given, "nP"));
      return std::unique_ptr<Layer>(std::make_unique<Maxout>(width, input_width, pieces));
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

// A list of layers as one layer: itself when it is one, else their chain.
std::unique_ptr<Layer> as_one_layer(LayerList layers) {
  if (layers.size() == 1) return std::move(layers.front());
  return std::make_unique<Chain>(std::move(layers));
}

LayerEntry chain_entry() {
  LayerEntry entry;
  entry.name = "chain.v1";
  entry.description = "Its layers one after another.";
  entry.takes_positional = true;
  entry.minimum_positional = 1;
  entry.build = [](const LayerSpec& spec, const Settings&, std::size_t input_width,
                   std::optional<std::size_t> output_width, const ChildBuilder& child) -> Result<LayerList> {
    LayerList layers;
    std::size_t width = input_width;
    for (std::size_t i = 0; i < spec.positional.size(); ++i) {
      // Thinc's chain gives the data's width to every layer whose nO is not set, not only the last.
      auto built = child(spec.positional[i].second, width, output_width);
      if (!built) return Error{built.error()};
      for (auto& layer : *built) layers.push_back(std::move(layer));
      width = layers.back()->output_width();
    }
    return layers;
  };
  return entry;
}

// add and concatenate: each layer sees the same input, and gets the data's width when its nO is not set,
// as Thinc's initialize gives it. add's first two layers are named (layer1, layer2), as Thinc's signature
// add(layer1, layer2, *layers) has them.
template <class Combined>
LayerEntry parallel_entry(const char* name, const char* description, std::size_t minimum,
                          std::vector<std::string> named_layers) {
  LayerEntry entry;
  entry.name = name;
  entry.description = description;
  entry.takes_positional = true;
  entry.minimum_positional = minimum;
  entry.layer_arguments = std::move(named_layers);
  const bool passes_output = std::string(name) == "add.v1";
  entry.build = [passes_output, order = entry.layer_arguments](
                    const LayerSpec& spec, const Settings&, std::size_t input_width,
                    std::optional<std::size_t> output_width, const ChildBuilder& child) -> Result<LayerList> {
    std::vector<const LayerSpec*> specs;
    for (const auto& wanted : order)
      for (const auto& [key, branch] : spec.named)
        if (key == wanted) specs.push_back(&branch);
    for (const auto& [key, branch] : spec.positional) specs.push_back(&branch);
    LayerList branches;
    for (const auto* branch : specs) {
      auto built = child(*branch, input_width, output_width);
      if (!built) return Error{built.error()};
      branches.push_back(as_one_layer(std::move(*built)));
    }
    if (branches.size() == 1) {  // as Thinc's concatenate of one layer: the layer itself
      LayerList one;
      one.push_back(std::move(branches.front()));
      return one;
    }
    if (passes_output)
      for (const auto& branch : branches)
        if (branch->output_width() != branches.front()->output_width())
          return layer_error(spec, fmt::format("its layers give {} and {} features; add needs equal widths",
                                               branches.front()->output_width(), branch->output_width()));
    LayerList layers;
    layers.push_back(std::make_unique<Combined>(std::move(branches)));
    return layers;
  };
  return entry;
}

LayerEntry residual_entry() {
  LayerEntry entry;
  entry.name = "residual.v1";
  entry.description = "x + layer(x): the layer must give as many features as it takes.";
  entry.layer_arguments = {"layer"};
  entry.build = [](const LayerSpec& spec, const Settings&, std::size_t input_width, std::optional<std::size_t>,
                   const ChildBuilder& child) -> Result<LayerList> {
    auto built = child(spec.named.front().second, input_width, input_width);
    if (!built) return Error{built.error()};
    auto inner = as_one_layer(std::move(*built));
    if (inner->output_width() != input_width)
      return layer_error(spec, fmt::format("its layer gives {} features for {} coming in; residual needs equal widths",
                                           inner->output_width(), input_width));
    LayerList layers;
    layers.push_back(std::make_unique<Residual>(std::move(inner)));
    return layers;
  };
  return entry;
}

LayerEntry clone_entry() {
  LayerEntry entry;
  entry.name = "clone.v1";
  entry.description = "n copies of orig one after another, each with its own weights.";
  entry.arguments = {{"n", SettingKind::integer, SettingValue{std::int64_t{1}}, "How many copies.", 0.0, 1 << 16}};
  entry.layer_arguments = {"orig"};
  entry.build = [](const LayerSpec& spec, const Settings& arguments, std::size_t input_width,
                   std::optional<std::size_t> output_width, const ChildBuilder& child) -> Result<LayerList> {
    const auto copies = static_cast<std::size_t>(get_integer(arguments, "n"));
    LayerList layers;
    if (copies == 0) {
      layers.push_back(std::make_unique<Noop>(input_width));
      return layers;
    }
    std::size_t width = input_width;
    for (std::size_t i = 0; i < copies; ++i) {
      auto built = child(spec.named.front().second, width, output_width);  // clone is a chain
      if (!built) return Error{built.error()};
      for (auto& layer : *built) layers.push_back(std::move(layer));
      width = layers.back()->output_width();
    }
    return layers;
  };
  return entry;
}

LayerEntry noop_entry() {
  LayerEntry entry;
  entry.name = "noop.v1";
  entry.description = "Passes its input on unchanged.";
  entry.takes_positional = true;  // Thinc's config asks for its [x.*] section, even an empty one
  entry.build = [](const LayerSpec& spec, const Settings&, std::size_t input_width, std::optional<std::size_t>,
                   const ChildBuilder&) -> Result<LayerList> {
    if (!spec.positional.empty()) return layer_error(spec, "psgrad's noop takes no layers");
    LayerList layers;
    layers.push_back(std::make_unique<Noop>(input_width));
    return layers;
  };
  return entry;
}

// Layers of a model's table front (model/table_graph.hpp): the engine runs them on id columns, so a
// chain of dense layers reaching one is a graph the table front did not take.
LayerEntry table_front_entry(const char* name, const char* description, std::vector<SettingSpec> arguments) {
  LayerEntry entry;
  entry.name = name;
  entry.description = description;
  entry.arguments = std::move(arguments);
  entry.build = [](const LayerSpec& spec, const Settings&, std::size_t, std::optional<std::size_t>,
                   const ChildBuilder&) -> Result<LayerList> {
    return layer_error(spec, "reads id columns: it belongs to the model's table front, before its dense layers");
  };
  return entry;
}

LayerEntry embed_entry() {
  return table_front_entry(
      "Embed.v1", "An embedding table indexed by the id itself (ids must be below nV).",
      {{"nO", SettingKind::integer, SettingValue{std::int64_t{0}}, "Width of each row (required).", 1.0, 1 << 20},
       {"nV", SettingKind::integer, SettingValue{std::int64_t{0}}, "Rows of the table (required).", 1.0, 4294967296.0},
       {"column", SettingKind::integer, SettingValue{std::int64_t{0}},
        "Which id column it reads (the data's id columns in name order).", 0.0, 1 << 16},
       {"dropout", SettingKind::number, SettingValue{0.0}, "Not supported: put Dropout.v1 after the pooling.", 0.0,
        1.0, true}});
}

LayerEntry sparse_linear_entry(const char* name, const char* description) {
  return table_front_entry(
      name, description,
      {{"nO", SettingKind::integer, SettingValue{std::int64_t{0}}, "Outputs (not set: the classes).", 1.0, 1 << 16},
       {"length", SettingKind::integer, SettingValue{std::int64_t{1} << 18}, "Rows of its weight table.", 1.0,
        4294967296.0}});
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

LayerEntry hashembed_entry() {
  return table_front_entry(
      "HashEmbed.v1", "An embedding table by the hashing trick: four hashed rows summed per id.",
      {{"nO", SettingKind::integer, SettingValue{std::int64_t{0}}, "Width of each row (required).", 1.0, 1 << 20},
       {"nV", SettingKind::integer, SettingValue{std::int64_t{0}}, "Rows of the table (required).", 1.0, 4294967296.0},
       {"seed", SettingKind::integer, SettingValue{std::int64_t{8}},
        "Hash seed; not set: 8 + column (Thinc draws it from the layer's id).", 0.0, 4294967295.0},
       {"column", SettingKind::integer, SettingValue{std::int64_t{0}},
        "Which id column it reads (the data's id columns in name order).", 0.0, 1 << 16},
       {"dropout", SettingKind::number, SettingValue{0.0}, "Not supported: put Dropout.v1 after the pooling.", 0.0,
        1.0, true}});
}

// with_array on a matrix is its layer (Thinc passes arrays through); around HashEmbed it is the table front's.
LayerEntry with_array_entry() {
  LayerEntry entry;
  entry.name = "with_array.v1";
  entry.description = "Its layer on the contiguous array of a sequence's items.";
  entry.arguments = {{"pad", SettingKind::integer, SettingValue{std::int64_t{0}}, "Padding (0 only).", 0.0, 0.0}};
  entry.layer_arguments = {"layer"};
  entry.build = [](const LayerSpec& spec, const Settings&, std::size_t input_width,
                   std::optional<std::size_t> output_width, const ChildBuilder& child) {
    return child(spec.named.front().second, input_width, output_width);
  };
  return entry;
}

// On a matrix the whole array is one sequence, as Thinc's expand_window on a Floats2d; in a table front
// directly on a column's Ragged (model/table_graph.hpp) its windows stop at each example's ends.
LayerEntry expand_window_entry() {
  LayerEntry entry;
  entry.name = "expand_window.v1";
  entry.description = "Each row with its window_size neighbours on either side, side by side (zeros past an end).";
  entry.arguments = {{"window_size", SettingKind::integer, SettingValue{std::int64_t{1}},
                      "Rows taken on either side.", 1.0, 64.0}};
  entry.build = [](const LayerSpec&, const Settings& arguments, std::size_t input_width, std::optional<std::size_t>,
                   const ChildBuilder&) -> Result<LayerList> {
    LayerList layers;
    layers.push_back(std::make_unique<ExpandWindow>(
        input_width, static_cast<std::size_t>(get_integer(arguments, "window_size")), false));
    return layers;
  };
  return entry;
}

NamedRegistry<LayerEntry>& layers() {
  static NamedRegistry<LayerEntry> registry{
      chain_entry(),
      parallel_entry<Add>("add.v1", "The sum of its layers' outputs on the same input.", 0, {"layer1", "layer2"}),
      parallel_entry<Concatenate>("concatenate.v1", "Its layers' outputs on the same input, side by side.", 1, {}),
      residual_entry(),
      clone_entry(),
      noop_entry(),
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
      hashembed_entry(),
      embed_entry(),
      sparse_linear_entry("SparseLinear.v1", "A hashed linear model of a bag of ids (refused: use SparseLinear.v2)."),
      sparse_linear_entry("SparseLinear.v2", "A hashed linear model of a bag of ids: two hashed rows of nO per id, "
                                             "summed, plus a bias."),
      softmax_activation_entry(),
      with_array_entry(),
      table_front_entry("list2ragged.v1", "A list of sequences as one Ragged.", {}),
      table_front_entry("reduce_sum.v1", "One row per sequence: the sum of its rows.", {}),
      table_front_entry("reduce_mean.v1", "One row per sequence: the mean of its rows.", {}),
      table_front_entry("reduce_max.v1", "One row per sequence: each column's largest value.", {}),
      table_front_entry("reduce_first.v1", "One row per sequence: its first row.", {}),
      table_front_entry("reduce_last.v1", "One row per sequence: its last row.", {}),
      expand_window_entry(),
  };
  return registry;
}

Result<LayerList> build_spec(const LayerSpec& spec, std::size_t input_width, std::optional<std::size_t> output_width) {
  const auto entry = find_layer(spec.name);
  if (!entry) return layer_error(spec, "not a layer psgrad has");
  Settings arguments = spec.arguments;
  fill_defaults(entry->arguments, arguments);
  try {
    return entry->build(spec, arguments, input_width, output_width, build_spec);
  } catch (const std::exception& error) {  // a combinator's own checks of its layers' widths
    return layer_error(spec, error.what());
  }
}

}  // namespace

std::shared_ptr<const LayerEntry> find_layer(const std::string& name) { return layers().find(name); }
std::vector<std::string> layer_names() { return layers().names(); }

Status check_layer_spec(const LayerSpec& spec) {
  const auto entry = find_layer(spec.name);
  if (!entry)
    return Error{fmt::format("{}: unknown layer '{}'; psgrad has: {}", where(spec), spec.name,
                             fmt::join(layer_names(), ", "))};
  for (const auto& [name, value] : spec.arguments) {
    const auto found = std::find_if(entry->arguments.begin(), entry->arguments.end(),
                                    [&](const SettingSpec& argument) { return argument.name == name; });
    if (found == entry->arguments.end()) {
      std::vector<std::string> known;
      for (const auto& argument : entry->arguments) known.push_back(argument.name);
      for (const auto& layer : entry->layer_arguments) known.push_back(layer);
      return layer_error(spec, fmt::format("unknown argument '{}'; it takes: {}", name,
                                           known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", "))));
    }
    if (auto expected = check_setting(*found, value)) return layer_error(spec, fmt::format("{}: expected {}", name, *expected));
  }
  if (!entry->takes_positional && !spec.positional.empty())
    return layer_error(spec, "takes no positional layers ([...*.name] sections)");
  if (spec.positional.size() < entry->minimum_positional)
    return layer_error(spec, fmt::format("needs at least {} layer{} ([{}.*.name] sections)", entry->minimum_positional,
                                         entry->minimum_positional == 1 ? "" : "s", where(spec)));
  for (const auto& [key, layer] : spec.named)
    if (std::find(entry->layer_arguments.begin(), entry->layer_arguments.end(), key) == entry->layer_arguments.end())
      return layer_error(spec, fmt::format("takes no layer '{}'", key));
  for (const auto& wanted : entry->layer_arguments)
    if (std::none_of(spec.named.begin(), spec.named.end(), [&](const auto& named) { return named.first == wanted; }))
      return layer_error(spec, fmt::format("needs its layer '{}' ([{}.{}] with @layers)", wanted, where(spec), wanted));
  for (const auto& [key, layer] : spec.positional)
    if (auto checked = check_layer_spec(layer); !checked) return checked;
  for (const auto& [key, layer] : spec.named)
    if (auto checked = check_layer_spec(layer); !checked) return checked;
  return success();
}

Result<LayerList> build_layers(const LayerSpec& spec, std::size_t input_width, std::optional<std::size_t> output_width) {
  if (auto checked = check_layer_spec(spec); !checked) return Error{checked.error()};
  return build_spec(spec, input_width, output_width);
}

}  // namespace psgrad
