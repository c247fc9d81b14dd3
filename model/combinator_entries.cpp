// Thinc's combinators: chain, add, concatenate, residual, clone, noop and with_array, each building its
// layers through the ChildBuilder it is given.
#include "model/layer_entries.hpp"

#include <fmt/format.h>

#include "model/combinators.hpp"

namespace psgrad {

namespace {

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

}  // namespace

std::vector<LayerEntry> combinator_entries() {
  return {
      chain_entry(),
      parallel_entry<Add>("add.v1", "The sum of its layers' outputs on the same input.", 0, {"layer1", "layer2"}),
      parallel_entry<Concatenate>("concatenate.v1", "Its layers' outputs on the same input, side by side.", 1, {}),
      residual_entry(),
      clone_entry(),
      noop_entry(),
      with_array_entry(),
  };
}

}  // namespace psgrad
