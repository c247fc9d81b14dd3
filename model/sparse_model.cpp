#include "model/sparse_model.hpp"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/layer_registry.hpp"
#include "model/model_layers.hpp"
#include "model/table_graph.hpp"

namespace psgrad {

namespace {

std::size_t total_width(const EmbeddingFront& front) {
  std::size_t width = 0;
  for (const auto& field : front.fields) width += field.width;
  return width;
}

// The tap goes first, so the dense chain's first real layer computes the gradient of its input.
LayerChain with_tap(LayerChain chain, std::size_t width, InputGradientTap*& tap) {
  auto first = std::make_unique<InputGradientTap>(width);
  tap = first.get();
  chain.insert(chain.begin(), std::move(first));
  return chain;
}

// Column names for a one-line message.
std::string listed(const std::vector<std::string>& names) {
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

SparseModel::SparseModel(EmbeddingFront front, LayerChain dense_chain, std::string architecture,
                         std::vector<std::string> number_names)
    : front_(std::move(front)),
      number_names_(std::move(number_names)),
      embedded_width_(total_width(front_)),
      dense_(with_tap(std::move(dense_chain), embedded_width_ + number_names_.size(), tap_), std::move(architecture)) {
  if (front_.fields.empty()) throw std::invalid_argument("a sparse model needs at least one field");
  if (dense_.input_width() != input_width())
    throw std::invalid_argument("the dense chain's input width must be the embeddings' total width plus the numbers");
}

Result<SparseModel> SparseModel::build(const std::string& architecture, const Settings& settings,
                                       std::size_t output_width, std::vector<std::string> number_names) {
  const auto entry = find_architecture(architecture);
  if (!entry) return Error{fmt::format("unknown architecture '{}'", architecture)};
  if (!has_tables(*entry)) return Error{fmt::format("architecture '{}' has no embedding tables", architecture)};
  auto filled = validated_settings(*entry, settings);
  if (!filled) return Error{filled.error()};
  auto front = entry->tables(*filled);
  if (!front) return Error{fmt::format("architecture '{}': {}", architecture, front.error())};
  const std::size_t width = total_width(*front) + number_names.size();
  return SparseModel(std::move(*front), entry->build(*filled, width, output_width), architecture,
                     std::move(number_names));
}

Result<SparseModel> SparseModel::build(const ModelSection& model, std::size_t output_width,
                                       std::vector<std::string> number_names) {
  if (model.graph.empty()) return build(model.architecture, model.settings, output_width, std::move(number_names));
  if (!graph_has_tables(model.graph))
    return Error{fmt::format("{}: the model has no embedding tables (no HashEmbed.v1)",
                             model.graph.path.empty() ? "model" : model.graph.path)};
  if (auto checked = check_layer_spec(model.graph); !checked) return Error{checked.error()};
  auto split = split_table_graph(model.graph);
  if (!split) return Error{split.error()};
  const std::size_t width = total_width(split->front) + number_names.size();
  auto dense = build_layers(split->dense, width, output_width);
  if (!dense) return Error{dense.error()};
  if (auto checked = check_output_layer(*dense, model.graph, output_width); !checked) return Error{checked.error()};
  return SparseModel(std::move(split->front), std::move(*dense), model.architecture, std::move(number_names));
}

Result<SparseModel> SparseModel::build_for_data(const std::string& architecture, const Settings& settings,
                                                const SparseDataset& data, const std::string& data_name) {
  ModelSection model;
  model.architecture = architecture;
  model.settings = settings;
  return build_for_data(model, data, data_name);
}

Result<SparseModel> SparseModel::build_for_data(const ModelSection& section, const SparseDataset& data,
                                                const std::string& data_name) {
  auto model = build(section, data.num_classes(), data.number_names);
  if (!model) return model;
  if (auto checked = model->check_inputs(data, data_name); !checked) return Error{checked.error()};
  return model;
}

Status SparseModel::check_inputs(const SparseDataset& data, const std::string& data_name) const {
  if (front_.fields.size() != data.id_fields.size())
    return Error{fmt::format("the model '{}' has {} id fields, the {} {}", architecture(), front_.fields.size(),
                             data_name, data.id_fields.size())};
  if (number_names_ != data.number_names)
    return Error{fmt::format("the model '{}' reads {} number columns ({}), the {} has {} ({})", architecture(),
                             number_names_.size(), listed(number_names_), data_name, data.number_names.size(),
                             listed(data.number_names))};
  return success();
}

Result<BatchLookup> SparseModel::look_up(const std::vector<RaggedIds>& batch, const std::vector<float>& numbers) const {
  if (batch.size() != front_.fields.size())
    return Error{fmt::format("a batch of {} fields for a model of {} fields", batch.size(), front_.fields.size())};
  BatchLookup lookup;
  lookup.examples = batch.front().examples();
  for (const auto& field : front_.fields) {
    if (field.column >= batch.size())
      return Error{fmt::format("a batch of {} fields has no field {}", batch.size(), field.column)};
    const auto& ids = batch[field.column];
    if (ids.examples() != lookup.examples)
      return Error{fmt::format("field {} has {} examples, field 0 has {}", field.column, ids.examples(),
                               lookup.examples)};
    lookup.fields.push_back(psgrad::look_up(field, ids));
  }
  if (numbers.size() != lookup.examples * number_width())
    return Error{fmt::format("{} numbers for {} examples of {} number columns each", numbers.size(), lookup.examples,
                             number_width())};
  // Scaled once here: the evaluator looks its dev set up once and scores it many times.
  lookup.numbers.reserve(numbers.size());
  for (const float value : numbers) lookup.numbers.push_back(scale_number(front_.numbers, value));
  return lookup;
}

ConstMatrixMap SparseModel::embed(const BatchLookup& lookup, const std::vector<SparseRows>& rows) {
  if (rows.size() != front_.fields.size() || lookup.fields.size() != front_.fields.size())
    throw std::invalid_argument(fmt::format("embed: {} row sets and {} field lookups for a model of {} fields",
                                            rows.size(), lookup.fields.size(), front_.fields.size()));
  const std::size_t n = lookup.examples;
  const std::size_t width = input_width();
  if (lookup.numbers.size() != n * number_width())
    throw std::invalid_argument(fmt::format("embed: {} numbers for {} examples of {} number columns",
                                            lookup.numbers.size(), n, number_width()));
  if (embedded_.size() < n * width) embedded_.resize(n * width);
  std::size_t column = 0;
  for (std::size_t f = 0; f < front_.fields.size(); ++f) {
    const auto& field = front_.fields[f];
    const auto& field_lookup = lookup.fields[f];
    id_vectors_.resize(field_lookup.id_count() * field.width);
    embed_ids(field, field_lookup, rows[f], id_vectors_.data());
    pool(front_.pooling, id_vectors_.data(), field_lookup.offsets, field.width, embedded_.data() + column, width);
    column += field.width;
  }
  const std::size_t numbers = number_width();
  for (std::size_t e = 0; e < n && numbers > 0; ++e)
    std::copy_n(lookup.numbers.data() + e * numbers, numbers, embedded_.data() + e * width + embedded_width_);
  return ConstMatrixMap(embedded_.data(), static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(width));
}

void SparseModel::backpropagate_front(const BatchLookup& lookup, std::vector<SparseRows>& row_gradients) {
  const ConstMatrixMap d_embedded = tap_->input_gradient();
  row_gradients.resize(front_.fields.size());
  std::size_t column = 0;
  for (std::size_t f = 0; f < front_.fields.size(); ++f) {
    const auto& field = front_.fields[f];
    const auto& field_lookup = lookup.fields[f];
    id_vectors_.resize(field_lookup.id_count() * field.width);
    // The numbers' columns, after the embeddings', have no parameters in front of them.
    pool_backward(front_.pooling, d_embedded.data() + column, input_width(), field_lookup.offsets, field.width,
                  id_vectors_.data());
    row_gradients[f] = embedding_gradient(field, field_lookup, id_vectors_.data());
    column += field.width;
  }
}

float SparseModel::compute_gradients(const BatchLookup& lookup, const std::vector<SparseRows>& rows,
                                     const ConstMatrixMap& targets, Random& dropout_rng,
                                     std::vector<SparseRows>& row_gradients) {
  const float loss = dense_.compute_gradients(embed(lookup, rows), targets, dropout_rng);
  backpropagate_front(lookup, row_gradients);
  return loss;
}

float SparseModel::compute_gradients(const float* weights, float* gradients, const BatchLookup& lookup,
                                     const std::vector<SparseRows>& rows, const ConstMatrixMap& targets,
                                     Random& dropout_rng, std::vector<SparseRows>& row_gradients) {
  const float loss = dense_.compute_gradients(weights, gradients, embed(lookup, rows), targets, dropout_rng);
  backpropagate_front(lookup, row_gradients);
  return loss;
}

ConstMatrixMap SparseModel::predict(const BatchLookup& lookup, const std::vector<SparseRows>& rows) {
  return dense_.predict(embed(lookup, rows));
}

Evaluation SparseModel::evaluate(const float* weights, const BatchLookup& lookup, const std::vector<SparseRows>& rows,
                                 const ConstMatrixMap& targets, std::size_t batch_size) {
  return dense_.evaluate(weights, embed(lookup, rows), targets, batch_size);
}

}  // namespace psgrad
