// Rebuilds a saved model from its stored config and checks it against the stored layout.
#include "io/saved_model.hpp"

#include <fmt/format.h>

#include "io/model_shape.hpp"
#include "model/finite.hpp"
#include "model/fnv1a.hpp"

namespace psgrad {

Result<SavedFile> read_saved_file(const std::string& path) {
  auto contents = read_model_file(path);
  if (!contents) return Error{contents.error()};
  const auto& header = contents->header;
  auto config = parse_config(header.config_text, path + " (stored config)");
  if (!config) return Error{fmt::format("{}: the stored config does not parse: {}", path, config.error())};
  if (config->model.architecture != header.architecture)
    return Error{fmt::format("{}: stored architecture \"{}\" differs from the stored config's \"{}\"", path,
                             header.architecture, config->model.architecture)};
  if (const auto bad = first_non_finite(contents->weights.data(), contents->weights.size()))
    return Error{fmt::format("{}: weight {} is {}: the model diverged in training and cannot be used", path, *bad,
                             contents->weights[*bad])};
  return SavedFile{std::move(contents).value(), std::move(config).value()};
}

Result<LoadedModel> load_saved_model(const std::string& path) {
  auto saved = read_saved_file(path);
  if (!saved) return Error{saved.error()};
  auto& contents = saved->contents;
  auto& config = saved->config;
  if (contents.tables)
    return Error{fmt::format("{}: a model file with embedding tables, read with the tables' model (load_tables_model)",
                             path)};
  const auto& header = contents.header;
  // Bounds, so a forged header cannot make the rebuild allocate without limit.
  if (header.input_width == 0 || header.num_classes == 0 || header.input_width > (1u << 24) ||
      header.num_classes > (1u << 20))
    return Error{fmt::format("{}: corrupted model file: {} inputs and {} classes", path, header.input_width,
                             header.num_classes)};
  // Laid out and sized before it is built: a stored config can ask for far more than the file's
  // weights fill.
  ModelSection stored = config.model;
  stored.architecture = header.architecture;
  auto shape = model_shape(stored, header.input_width, header.num_classes);
  if (!shape) return Error{fmt::format("{}: cannot rebuild the stored architecture: {}", path, shape.error())};
  if (shape->layout_hash != header.layout_hash)
    return Error{fmt::format("{}: layout hash {} does not match {} of the layout rebuilt from \"{}\" for {} "
                             "inputs and {} classes",
                             path, hash_hex(header.layout_hash), hash_hex(shape->layout_hash), header.architecture,
                             header.input_width, header.num_classes)};
  if (contents.weights.size() != shape->parameters)
    return Error{fmt::format("{}: holds {} weights but its layout needs {}", path, contents.weights.size(),
                             shape->parameters)};
  auto model = Model::build(stored, header.input_width, header.num_classes);
  if (!model) return Error{fmt::format("{}: cannot rebuild the stored architecture: {}", path, model.error())};
  model->set_weights(contents.weights.data(), contents.weights.size());
  return LoadedModel{path, header, std::move(config), std::move(model).value()};
}

Result<LoadedTablesModel> load_tables_model(const std::string& path) {
  auto saved = read_saved_file(path);
  if (!saved) return Error{saved.error()};
  auto& file = saved->contents;
  if (!file.tables) return Error{fmt::format("{}: a model file without embedding tables", path)};
  // The number columns it was trained on, in the order the reader gives them.
  ModelSection stored = saved->config.model;
  stored.architecture = file.header.architecture;
  auto model = SparseModel::build(stored, file.tables->class_names.size(), number_column_names(file.tables->columns));
  if (!model) return Error{fmt::format("{}: {}", path, model.error())};
  if (model->dense().parameter_count() != file.weights.size())
    return Error{fmt::format("{}: holds {} dense weights, but its model {} has {}", path, file.weights.size(),
                             file.header.architecture, model->dense().parameter_count())};
  if (model->fields().size() != file.tables->tables.size())
    return Error{fmt::format("{}: holds {} tables, but its model has {} fields", path, file.tables->tables.size(),
                             model->fields().size())};
  for (std::size_t f = 0; f < file.tables->tables.size(); ++f)
    if (file.tables->tables[f].rows.width != model->fields()[f].width)
      return Error{fmt::format("{}: table {} has rows of width {}, but its field's width is {}", path, f,
                               file.tables->tables[f].rows.width, model->fields()[f].width)};
  for (std::size_t f = 0; f < file.tables->tables.size(); ++f) {
    const auto& rows = file.tables->tables[f].rows;
    if (const auto bad = first_non_finite(rows.values.data(), rows.values.size()))
      return Error{fmt::format("{}: table {} holds {} in the row of key {}: the model diverged in training and "
                               "cannot be used",
                               path, f, rows.values[*bad], rows.keys[*bad / std::max<std::size_t>(rows.width, 1)])};
  }
  model->dense().set_weights(file.weights.data(), file.weights.size());
  return LoadedTablesModel{std::move(file), std::move(saved->config), std::move(model).value()};
}

Status check_input_width(const LoadedModel& loaded, std::size_t rows, std::size_t cols, const std::string& data_name) {
  const auto& header = loaded.header;
  if (rows * cols == header.input_width) return success();
  const auto expected = header.image_rows && header.image_cols
                            ? fmt::format("{}x{} images ({} inputs)", header.image_rows, header.image_cols,
                                          header.input_width)
                            : fmt::format("{} inputs", header.input_width);
  return Error{fmt::format("{}: image size {}x{} ({} inputs) does not match the model {}, which takes {}",
                           data_name, rows, cols, rows * cols, loaded.path, expected)};
}

Status check_input_width(const LoadedModel& loaded, std::size_t width, const std::string& data_name) {
  if (width == loaded.header.input_width) return success();
  return Error{fmt::format("{}: {} features per example do not match the model {}, which takes {} inputs", data_name,
                           width, loaded.path, loaded.header.input_width)};
}

}  // namespace psgrad
