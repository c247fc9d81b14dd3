// A registered architecture's size for given settings, found without allocating its weights, so a
// config can be sized before anything big exists.
#pragma once

#include <cstdint>
#include <string>

#include "model/result.hpp"
#include "model/job.hpp"
#include "model/settings.hpp"

namespace psgrad {

struct ModelShape {
  std::uint64_t parameters = 0;  // floats in the weight buffer (and in each gradient, moment, copy)
  // Floats of activation buffers per batch row: each layer keeps about 2 x its output width plus its
  // input width (Relu: output, d_pre, d_input; Dropout: mask, output, d_input; Softmax: output,
  // d_input), and the model keeps the logits' gradient.
  std::uint64_t activation_floats_per_row = 0;
  std::uint64_t layout_hash = 0;  // as Model::layout().hash() of the built model
};

// Builds the layer chain (layers size their buffers only when bound or reserved) and lays out the
// parameter arrays it declares, named as Model names them. Errors name the architecture or the layer.
Result<ModelShape> model_shape(const ModelSection& model, std::uint64_t input_width, std::uint64_t classes);

}  // namespace psgrad
