#include "model/sparse_model.hpp"

#include <algorithm>
#include <memory>
#include <new>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "model/bias.hpp"
#include "model/expand_window.hpp"
#include "model/layer_registry.hpp"
#include "model/model_layers.hpp"
#include "model/table_graph.hpp"

namespace psgrad {

namespace {

// The width the fields' pooled rows take side by side: each field's, or its column layers' output's.
std::size_t total_width(const EmbeddingFront& front, const std::vector<LayerList>& column_layers = {}) {
  std::size_t width = 0;
  for (std::size_t f = 0; f < front.fields.size(); ++f)
    width += f < column_layers.size() && !column_layers[f].empty() ? column_layers[f].back()->output_width()
                                                                     : vector_width(front.fields[f]);
  return width;
}

// The front layer goes first, so the dense chain's first real layer computes the gradient of its input.
LayerChain with_front(LayerChain chain, std::size_t width, std::vector<LayerList> column_layers,
                      FrontLayers*& front) {
  auto first = std::make_unique<FrontLayers>(width, std::move(column_layers));
  front = first.get();
  chain.insert(chain.begin(), std::move(first));
  return chain;
}

std::vector<LayerList> one_per_field(std::vector<LayerList> column_layers, std::size_t fields) {
  column_layers.resize(fields);
  return column_layers;
}

// Column names for a one-line message.
std::string listed(const std::vector<std::string>& names) {
  return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
}

}  // namespace

SparseModel::SparseModel(EmbeddingFront front, LayerChain dense_chain, std::string architecture,
                         std::vector<std::string> number_names, std::vector<LayerList> column_layers)
    : front_(std::move(front)),
      number_names_(std::move(number_names)),
      embedded_width_(total_width(front_, column_layers)),
      dense_(with_front(std::move(dense_chain), embedded_width_ + number_names_.size(),
                        one_per_field(std::move(column_layers), front_.fields.size()), front_layers_),
             std::move(architecture)),
      id_vectors_(front_.fields.size()),
      pooled_rows_(front_.fields.size(), nullptr),
      reserved_ids_(front_.fields.size(), 0) {
  if (front_.fields.empty()) throw std::invalid_argument("a sparse model needs at least one field");
  if (dense_.input_width() != input_width())
    throw std::invalid_argument("the dense chain's input width must be the embeddings' total width plus the numbers");
  for (std::size_t f = 0; f < front_.fields.size(); ++f) {
    const auto& layers = front_layers_->column(f);
    for (std::size_t i = 0; i < layers.size(); ++i)
      if (layers[i]->input_width() != (i == 0 ? vector_width(front_.fields[f]) : layers[i - 1]->output_width()))
        throw std::invalid_argument("a field's column layers must take the width of what comes before them");
  }
}

std::size_t SparseModel::pooled_width(std::size_t f) const {
  const auto& layers = front_layers_->column(f);
  return layers.empty() ? vector_width(front_.fields[f]) : layers.back()->output_width();
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
  auto split = split_table_graph(model.graph, output_width);
  if (!split) return Error{split.error()};
  std::vector<LayerList> column_layers(split->front.fields.size());
  for (std::size_t f = 0; f < column_layers.size(); ++f) {
    std::size_t width = vector_width(split->front.fields[f]);
    for (const auto& token_layer : split->token_layers[f]) {
      if (token_layer.ragged) {  // expand_window on the column's Ragged: windows within each example
        const auto window = token_layer.layer.arguments.count("window_size")
                                ? std::get<std::int64_t>(token_layer.layer.arguments.at("window_size"))
                                : std::int64_t{1};
        column_layers[f].push_back(std::make_unique<ExpandWindow>(width, static_cast<std::size_t>(window), true));
      } else {
        auto built = build_layers(token_layer.layer, width, std::nullopt);
        if (!built) return Error{built.error()};
        for (auto& layer : *built) column_layers[f].push_back(std::move(layer));
      }
      width = column_layers[f].back()->output_width();
    }
  }
  const std::size_t width = total_width(split->front, column_layers) + number_names.size();
  LayerList dense;
  if (split->bias_width) dense.push_back(std::make_unique<Bias>(width));
  if (!split->dense.positional.empty()) {
    auto built = build_layers(split->dense, width, output_width);
    if (!built) return Error{built.error()};
    for (auto& layer : *built) dense.push_back(std::move(layer));
  }
  if (auto checked = check_output_layer(dense, model.graph, output_width); !checked) return Error{checked.error()};
  return SparseModel(std::move(split->front), std::move(dense), model.architecture, std::move(number_names),
                     std::move(column_layers));
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
  // Embed indexes its table by the id itself, as Thinc's: an id beyond its rows has no row.
  for (std::size_t f = 0; f < front_.fields.size(); ++f) {
    if (front_.fields[f].keys != RowKeying::embed) continue;
    const auto& ids = data.id_fields[f].ids;
    const auto largest = std::max_element(ids.begin(), ids.end());
    if (largest != ids.end() && *largest >= front_.fields[f].rows)
      return Error{fmt::format("the {}'s column {} has id {}, but its Embed.v1 table has nV = {} rows (ids 0 to {})",
                               data_name, data.id_fields[f].name, *largest, front_.fields[f].rows,
                               front_.fields[f].rows - 1)};
  }
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

ConstMatrixMap SparseModel::embed(const BatchLookup& lookup, const std::vector<SparseRows>& rows, bool is_train,
                                  Random& rng) {
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
    const std::size_t ids = field_lookup.id_count();
    auto& vectors = id_vectors_[f];
    vectors.resize(ids * vector_width(field));
    embed_ids(field, field_lookup, rows[f], vectors.data());
    pooled_rows_[f] = vectors.data();
    auto& layers = front_layers_->column(f);
    if (!layers.empty()) {
      if (ids > reserved_ids_[f]) {
        for (auto& layer : layers) layer->reserve(ids);
        reserved_ids_[f] = ids;
      }
      ConstMatrixMap activations(vectors.data(), static_cast<Eigen::Index>(ids), static_cast<Eigen::Index>(vector_width(field)));
      for (auto& layer : layers) {
        if (auto* window = dynamic_cast<ExpandWindow*>(layer.get())) window->set_sequences(&field_lookup.offsets);
        new (&activations) ConstMatrixMap(layer->forward(activations, is_train, rng));
      }
      pooled_rows_[f] = activations.data();
    }
    pool(front_.pooling, pooled_rows_[f], field_lookup.offsets, pooled_width(f), embedded_.data() + column, width);
    column += pooled_width(f);
  }
  const std::size_t numbers = number_width();
  for (std::size_t e = 0; e < n && numbers > 0; ++e)
    std::copy_n(lookup.numbers.data() + e * numbers, numbers, embedded_.data() + e * width + embedded_width_);
  return ConstMatrixMap(embedded_.data(), static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(width));
}

void SparseModel::backpropagate_front(const BatchLookup& lookup, std::vector<SparseRows>& row_gradients) {
  const ConstMatrixMap d_embedded = front_layers_->input_gradient();
  row_gradients.resize(front_.fields.size());
  std::size_t column = 0;
  for (std::size_t f = 0; f < front_.fields.size(); ++f) {
    const auto& field = front_.fields[f];
    const auto& field_lookup = lookup.fields[f];
    const std::size_t ids = field_lookup.id_count();
    const std::size_t width = pooled_width(f);
    d_pooled_rows_.resize(ids * width);
    // The numbers' columns, after the embeddings', have no parameters in front of them.
    pool_backward(front_.pooling, d_embedded.data() + column, input_width(), field_lookup.offsets, width,
                  d_pooled_rows_.data(), pooled_rows_[f]);
    ConstMatrixMap d_vectors(d_pooled_rows_.data(), static_cast<Eigen::Index>(ids), static_cast<Eigen::Index>(width));
    auto& layers = front_layers_->column(f);
    for (std::size_t i = layers.size(); i-- > 0;)
      new (&d_vectors) ConstMatrixMap(layers[i]->backward(d_vectors, true));
    row_gradients[f] = embedding_gradient(field, field_lookup, d_vectors.data());
    column += width;
  }
}

float SparseModel::compute_gradients(const BatchLookup& lookup, const std::vector<SparseRows>& rows,
                                     const ConstMatrixMap& targets, Random& dropout_rng,
                                     std::vector<SparseRows>& row_gradients) {
  dense_.use_buffers(dense_.weights_data(), dense_.gradients_data());
  const float loss = dense_.compute_gradients(embed(lookup, rows, true, dropout_rng), targets, dropout_rng);
  backpropagate_front(lookup, row_gradients);
  return loss;
}

float SparseModel::compute_gradients(const float* weights, float* gradients, const BatchLookup& lookup,
                                     const std::vector<SparseRows>& rows, const ConstMatrixMap& targets,
                                     Random& dropout_rng, std::vector<SparseRows>& row_gradients) {
  dense_.use_buffers(weights, gradients);
  const float loss = dense_.compute_gradients(weights, gradients, embed(lookup, rows, true, dropout_rng), targets,
                                              dropout_rng);
  backpropagate_front(lookup, row_gradients);
  return loss;
}

ConstMatrixMap SparseModel::predict(const BatchLookup& lookup, const std::vector<SparseRows>& rows) {
  dense_.use_buffers(dense_.weights_data(), dense_.gradients_data());
  return dense_.predict(embed(lookup, rows, false, no_dropout_rng_));
}

Evaluation SparseModel::evaluate(const float* weights, const BatchLookup& lookup, const std::vector<SparseRows>& rows,
                                 const ConstMatrixMap& targets, std::size_t batch_size) {
  dense_.use_buffers(weights, dense_.gradients_data());
  return dense_.evaluate(weights, embed(lookup, rows, false, no_dropout_rng_), targets, batch_size);
}

}  // namespace psgrad
