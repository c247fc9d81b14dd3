#include "model/front_layers.hpp"

#include <map>

#include <fmt/format.h>

namespace psgrad {

FrontLayers::FrontLayers(std::size_t width, std::vector<LayerList> columns)
    : width_(width), columns_(std::move(columns)) {}

void FrontLayers::declare_parameters(const std::string& layer_name, ParameterLayout& layout) {
  for (std::size_t f = 0; f < columns_.size(); ++f) {
    std::map<std::string, int> ordinals;
    for (auto& layer : columns_[f]) {
      const auto kind = layer->kind();
      layer->declare_parameters(fmt::format("{}.column{}.{}{}", layer_name, f, kind, ++ordinals[kind]), layout);
    }
  }
}

void FrontLayers::bind(float* weights, float* gradients, const ParameterLayout& layout) {
  for (auto& column : columns_)
    for (auto& layer : column) layer->bind(weights, gradients, layout);
}

void FrontLayers::initialize(Random& rng) {
  for (auto& column : columns_)
    for (auto& layer : column) layer->initialize(rng);
}

}  // namespace psgrad
