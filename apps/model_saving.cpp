// Checks the weights fit the run's layout and writes the model file.
#include "apps/model_saving.hpp"

#include <fmt/format.h>

#include "model/fnv1a.hpp"
#include "io/model_file.hpp"
#include "model/finite.hpp"

namespace psgrad {

Status save_model(const std::string& path, const PreparedRun& run, const Weights& weights) {
  const auto& layout = run.layout;
  // A file whose layout disagrees with its weights would only be refused later, far from the cause.
  if (const auto differs = layout.mismatch(weights.layout_hash, weights.values.size()))
    return Error{fmt::format("{}: the final weights do not fit the model's layout ({})", path, *differs)};
  if (const auto bad = first_non_finite(weights.values.data(), weights.values.size()))
    return Error{fmt::format("{}: not saved: weight {} is {} (training diverged)", path, *bad,
                             weights.values.data()[*bad])};
  const auto& data = *run.data.train;
  ModelFileHeader header;
  header.weights_version = weights.version;
  header.input_width = data.width;
  header.num_classes = data.num_classes;
  header.image_rows = data.image_rows;
  header.image_cols = data.image_cols;
  header.architecture = run.config.model.architecture;
  header.config_text = run.config_text;
  header.layout_description = layout.describe();
  header.layout_hash = layout.hash();
  return write_model_file(path, header, weights.values.data(), weights.values.size());
}

}  // namespace psgrad
