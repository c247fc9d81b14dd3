#include "model/model_layers.hpp"

#include <fmt/format.h>

#include "model/layer_registry.hpp"

namespace psgrad {

namespace {

// The kind of layer that produces the model's output, looking into combinators' last layers.
std::string output_kind(const Layer& layer) {
  if (const auto* chain = dynamic_cast<const Chain*>(&layer)) return output_kind(*chain->children().back());
  return layer.kind();
}

}  // namespace

Result<LayerChain> model_layers(const ModelSection& model, std::size_t input_width, std::size_t output_width) {
  if (model.graph.empty()) {
    const auto entry = find_architecture(model.architecture);
    if (!entry) return Error{fmt::format("unknown architecture '{}'", model.architecture)};
    if (has_tables(*entry))
      return Error{fmt::format("architecture '{}' has embedding tables: it reads named id columns, not a matrix of "
                               "features alone",
                               model.architecture)};
    auto filled = validated_settings(*entry, model.settings);
    if (!filled) return Error{filled.error()};
    return entry->build(*filled, input_width, output_width);
  }
  auto layers = build_layers(model.graph, input_width, output_width);
  if (!layers) return Error{layers.error()};
  const auto last = output_kind(*layers->back());
  if (last != "softmax")
    return Error{fmt::format("{}: the model ends in a {} layer; psgrad trains classifiers with cross-entropy, so the "
                             "last layer must be Softmax.v1 or Softmax.v2",
                             model.graph.path.empty() ? "model" : model.graph.path, last)};
  if (layers->back()->output_width() != output_width)
    return Error{fmt::format("{}: the model gives {} outputs, but the data has {} classes",
                             model.graph.path.empty() ? "model" : model.graph.path, layers->back()->output_width(),
                             output_width)};
  return layers;
}

}  // namespace psgrad
