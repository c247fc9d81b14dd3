// Thinc's registered layers and combinators (@layers = "Relu.v1", "chain.v1"), with Thinc 8.1.7's
// argument names and defaults, and the building of a LayerSpec into layers: nI is the width of what
// comes in, and the model's last layer takes nO from the data when it is not written, as Thinc's
// initialize infers them.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/combinators.hpp"
#include "model/layer_spec.hpp"
#include "model/result.hpp"
#include "model/settings.hpp"

namespace psgrad {

// Builds a child spec: what comes in, and the width the data asks of its output (set only for the
// model's last layer and what ends with it).
using ChildBuilder =
    std::function<Result<LayerList>(const LayerSpec&, std::size_t input_width, std::optional<std::size_t> output_width)>;

struct LayerEntry {
  std::string name;  // "Relu.v1"
  std::string description;
  std::vector<SettingSpec> arguments;  // every one has a default: Thinc's, or 0 for "not set" (nO, nI)
  bool takes_positional = false;       // [x.*.name] sections: chain's, add's and concatenate's layers
  std::size_t minimum_positional = 0;
  std::vector<std::string> layer_arguments;  // named layer sections: residual's "layer", clone's "orig"
  std::vector<std::string> initializer_arguments;  // sections with @initializers: "init_W", "init_b"
  // Builds the layers it stands for, in order (Relu with dropout is relu then dropout, as Thinc's chain);
  // arguments have the defaults filled in.
  std::function<Result<LayerList>(const LayerSpec&, const Settings& arguments, std::size_t input_width,
                                  std::optional<std::size_t> output_width, const ChildBuilder&)>
      build;
};

std::shared_ptr<const LayerEntry> find_layer(const std::string& name);
std::vector<std::string> layer_names();

// Whether spec and every layer in it are registered, with known arguments of the right kinds and the
// layers each takes. The error is one line naming the spec's path.
Status check_layer_spec(const LayerSpec& spec);

// The layers spec stands for, in order, for input_width features in and output_width classes out.
// output_width: the classes, which layers without nO take; unset (layers before a pooling): none do.
Result<LayerList> build_layers(const LayerSpec& spec, std::size_t input_width, std::optional<std::size_t> output_width);

}  // namespace psgrad
