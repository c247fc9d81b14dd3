#include "model/model_layers.hpp"

#include <fmt/format.h>

#include "model/layer_registry.hpp"
#include "model/table_graph.hpp"

namespace psgrad {

namespace {

// The kind of layer that produces the model's output, looking into combinators' last layers.
std::string output_kind(const Layer& layer) {
  if (const auto* chain = dynamic_cast<const Chain*>(&layer)) return output_kind(*chain->children().back());
  return layer.kind();
}

}  // namespace

Status check_output_layer(const LayerChain& layers, const LayerSpec& graph, std::size_t output_width) {
  const auto where = graph.path.empty() ? std::string("model") : graph.path;
  const auto last = output_kind(*layers.back());
  if (last != "softmax" && last != "softmax_activation")
    return Error{fmt::format("{}: the model ends in a {} layer; psgrad trains classifiers with cross-entropy, so the "
                             "last layer must be Softmax.v1, Softmax.v2 or softmax_activation.v1",
                             where, last)};
  if (layers.back()->output_width() != output_width)
    return Error{fmt::format("{}: the model gives {} outputs, but the data has {} classes", where,
                             layers.back()->output_width(), output_width)};
  return success();
}

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
  if (graph_has_tables(model.graph))
    return Error{fmt::format("{}: the model has embedding tables: it reads named id columns, not a matrix of "
                             "features alone",
                             model.graph.path.empty() ? "model" : model.graph.path)};
  auto layers = build_layers(model.graph, input_width, output_width);
  if (!layers) return Error{layers.error()};
  if (auto checked = check_output_layer(*layers, model.graph, output_width); !checked) return Error{checked.error()};
  return layers;
}

}  // namespace psgrad
