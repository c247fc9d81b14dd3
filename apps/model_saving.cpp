// Rebuilds the run's architecture for its layout, checks the weights fit it, and writes the model file.
#include "apps/model_saving.hpp"

#include <fmt/format.h>

#include "io/fnv1a.hpp"
#include "io/model_file.hpp"
#include "model/model.hpp"

namespace psgrad {

Status save_model(const std::string& path, const Config& config, const Dataset& data, const Weights& weights) {
  auto model = Model::build(config.model.architecture, config.model.settings, data.width, data.num_classes);
  if (!model) return Error{fmt::format("{}: cannot describe the model: {}", path, model.error())};
  const auto& layout = model->layout();
  // A file whose layout disagrees with its weights would only be refused later, far from the cause.
  if (weights.values.size() != layout.total_size() || (weights.layout_hash != 0 && weights.layout_hash != layout.hash()))
    return Error{fmt::format("{}: the final weights ({} floats, layout {}) do not fit the model's layout ({} floats, "
                             "layout {})",
                             path, weights.values.size(), hash_hex(weights.layout_hash), layout.total_size(),
                             hash_hex(layout.hash()))};
  ModelFileHeader header;
  header.weights_version = weights.version;
  header.input_width = data.width;
  header.num_classes = data.num_classes;
  header.image_rows = data.image_rows;
  header.image_cols = data.image_cols;
  header.architecture = config.model.architecture;
  header.config_text = render_config(config);
  header.layout_description = layout.describe();
  header.layout_hash = layout.hash();
  return write_model_file(path, header, weights.values.data(), weights.values.size());
}

}  // namespace psgrad
