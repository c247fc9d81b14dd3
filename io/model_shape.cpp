// Sizes a model from its layer chain: parameter arrays declared, nothing allocated.
#include "io/model_shape.hpp"

#include <exception>
#include <map>

#include <fmt/format.h>

#include "model/parameter_layout.hpp"
#include "model/model_layers.hpp"

namespace psgrad {

Result<ModelShape> model_shape(const ModelSection& model, std::uint64_t input_width, std::uint64_t classes) {
  // A registered architecture is outside code, and settings it lacks make its getters throw: whatever
  // it throws becomes a message, not an abort.
  try {
    const auto chain = model_layers(model, static_cast<std::size_t>(input_width), static_cast<std::size_t>(classes));
    if (!chain) return Error{chain.error()};
    ParameterLayout layout;
    ModelShape shape;
    std::map<std::string, int> ordinals;
    for (const auto& layer : *chain) {
      const auto kind = layer->kind();
      layer->declare_parameters(fmt::format("{}{}", kind, ++ordinals[kind]), layout);
      shape.activation_floats_per_row += 2 * std::uint64_t{layer->output_width()} + layer->input_width();
    }
    shape.parameters = layout.total_size();
    shape.layout_hash = layout.hash();
    shape.activation_floats_per_row += classes;
    return shape;
  } catch (const std::exception& error) {
    return Error{fmt::format("architecture '{}' cannot be built: {}", model.architecture, error.what())};
  }
}

}  // namespace psgrad
