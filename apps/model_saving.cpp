// Checks the weights fit the run's layout and writes the model file.
#include "apps/model_saving.hpp"

#include <fmt/format.h>

#include "model/finite.hpp"

namespace psgrad {

ModelFileHeader model_file_header(const PreparedRun& run, std::uint64_t weights_version) {
  const auto& data = *run.data.train;
  ModelFileHeader header;
  header.weights_version = weights_version;
  header.input_width = data.width;
  header.num_classes = data.num_classes;
  header.image_rows = data.image_rows;
  header.image_cols = data.image_cols;
  header.architecture = run.config.model.architecture;
  header.config_text = run.config_text;
  header.layout_description = run.layout.describe();
  header.layout_hash = run.layout.hash();
  return header;
}

Status save_model(const std::string& path, const ModelFileHeader& header, const ParameterLayout& layout,
                  const float* weights, std::size_t weight_count) {
  // A file whose layout disagrees with its weights would only be refused later, far from the cause.
  if (const auto differs = layout.mismatch(header.layout_hash, weight_count))
    return Error{fmt::format("{}: the final weights do not fit the model's layout ({})", path, *differs)};
  if (const auto bad = first_non_finite(weights, weight_count))
    return Error{fmt::format("{}: not saved: weight {} is {} (training diverged)", path, *bad, weights[*bad])};
  return write_model_file(path, header, weights, weight_count);
}

Status save_model(const std::string& path, const PreparedRun& run, const Weights& weights) {
  // The weights' own stamp is checked, not the run's: they must have come from this layout.
  if (const auto differs = run.layout.mismatch(weights.layout_hash, weights.values.size()))
    return Error{fmt::format("{}: the final weights do not fit the model's layout ({})", path, *differs)};
  return save_model(path, model_file_header(run, weights.version), run.layout, weights.values.data(),
                    weights.values.size());
}

}  // namespace psgrad
