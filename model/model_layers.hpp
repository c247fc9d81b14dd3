// The layers a config's [model] stands for: a registered architecture's chain, or a graph of Thinc's
// layers, which must end in Softmax (psgrad trains classifiers with cross-entropy).
#pragma once

#include <cstddef>

#include "model/job.hpp"
#include "model/registry.hpp"
#include "model/result.hpp"

namespace psgrad {

// Whether a graph's built layers end in Softmax with one output per class; the error names the graph.
Status check_output_layer(const LayerChain& layers, const LayerSpec& graph, std::size_t output_width);

Result<LayerChain> model_layers(const ModelSection& model, std::size_t input_width, std::size_t output_width);

}  // namespace psgrad
