#include "model/table_graph.hpp"

#include <optional>

#include <fmt/format.h>

#include "model/registry.hpp"

namespace psgrad {

namespace {

constexpr const char* kHashEmbed = "HashEmbed.v1";
constexpr const char* kLayout =
    "a model with tables starts with its table front: per id column [list2ragged.v1 >>] "
    "with_array.v1(HashEmbed.v1 or Embed.v1) [>> with_array.v1(layer) or expand_window.v1 ...] >> reduce_sum.v1, "
    "reduce_mean.v1, reduce_max.v1, reduce_first.v1 or reduce_last.v1, several columns in a concatenate.v1; or "
    "SparseLinear.v2 on one id column";

std::string where(const LayerSpec& spec) { return spec.path.empty() ? spec.name : spec.path; }

Error refused(const LayerSpec& spec, const std::string& problem) {
  return Error{fmt::format("{}: {}: {}; {}", where(spec), spec.name, problem, kLayout)};
}

std::int64_t argument(const LayerSpec& spec, const char* name, std::int64_t otherwise) {
  const auto found = spec.arguments.find(name);
  return found == spec.arguments.end() ? otherwise : std::get<std::int64_t>(found->second);
}

// The layers a chain holds, or the layer itself.
std::vector<const LayerSpec*> sequence_of(const LayerSpec& spec) {
  std::vector<const LayerSpec*> layers;
  if (spec.name == "chain.v1")
    for (const auto& [key, layer] : spec.positional) layers.push_back(&layer);
  else
    layers.push_back(&spec);
  return layers;
}

bool holds_tables(const LayerSpec& spec);

struct Column {
  HashEmbedSpec field;
  std::vector<TokenLayer> token_layers;
  Pooling pooling = Pooling::mean;
  bool bias = false;  // SparseLinear's
};

bool is_table_layer(const std::string& name) {
  return name == kHashEmbed || name == "Embed.v1" || name == "SparseLinear.v1" || name == "SparseLinear.v2";
}

// SparseLinear on a column's bag of ids: its two hashed rows per id summed, zero at first, plus a bias.
// v2: a row of nO weights per hashed key. v1 (Thinc's v1_indexing): W[hash & (length - 1) + class], whose
// windows overlap, so a row is one weight, keyed by its place in Thinc's flat W.
Result<Column> sparse_linear_column(const LayerSpec& layer, std::size_t default_column,
                                    std::optional<std::size_t> classes) {
  Column column;
  const auto outputs =
      static_cast<std::size_t>(argument(layer, "nO", classes ? static_cast<std::int64_t>(*classes) : 0));
  if (outputs == 0) return refused(layer, "nO is not set and nothing gives it");
  const auto length = static_cast<std::uint64_t>(argument(layer, "length", std::int64_t{1} << 18));
  if (layer.name == "SparseLinear.v1") {
    column.field.width = 1;
    column.field.outputs = outputs;
    column.field.rows = length + outputs - 1;
    column.field.keys = RowKeying::sparse_linear_v1;
  } else {
    column.field.width = outputs;
    column.field.rows = length;
    column.field.keys = RowKeying::sparse_linear;
  }
  column.field.column = default_column;
  column.field.low = column.field.high = 0.0f;
  column.pooling = Pooling::sum;
  column.bias = true;
  return column;
}

std::optional<Pooling> reduce_of(const std::string& name) {
  for (const char* pooling : {"sum", "mean", "max", "first", "last"})
    if (name == std::string("reduce_") + pooling + ".v1") return pooling_named(pooling);
  return std::nullopt;
}

// One column's path at layers[at...]: [list2ragged] >> HashEmbed or with_array(HashEmbed) >> reduce_*.
// Moves at past it.
Result<Column> read_column(const std::vector<const LayerSpec*>& layers, std::size_t& at, std::size_t default_column,
                           const LayerSpec& owner, std::optional<std::size_t> classes) {
  if (at < layers.size() && layers[at]->name.rfind("SparseLinear.", 0) == 0)
    return sparse_linear_column(*layers[at++], default_column, classes);
  if (at < layers.size() && layers[at]->name == "list2ragged.v1") ++at;
  if (at >= layers.size()) return refused(owner, "its table front ends before its HashEmbed.v1");
  const LayerSpec* embed = layers[at];
  if (embed->name == "with_array.v1") {
    if (argument(*embed, "pad", 0) != 0) return refused(*embed, "pad is for padded sequences, which psgrad has none of");
    embed = &embed->named.front().second;
  }
  if (embed->name != kHashEmbed && embed->name != "Embed.v1")
    return refused(*layers[at], "expected HashEmbed.v1 or Embed.v1 here");
  if (embed->arguments.count("dropout"))
    return refused(*embed, "dropout on an embedding table is not supported; put Dropout.v1 after the pooling");
  Column column;
  column.field.width = static_cast<std::size_t>(argument(*embed, "nO", 0));
  column.field.rows = static_cast<std::uint64_t>(argument(*embed, "nV", 0));
  if (column.field.width == 0 || column.field.rows == 0) return refused(*embed, "nO and nV must be set");
  column.field.column = static_cast<std::size_t>(argument(*embed, "column", static_cast<std::int64_t>(default_column)));
  // Thinc draws an unset seed from the layer's id, which differs from process to process; psgrad, which
  // must give every worker and shard the same keys, takes 8 + column (spaCy's MultiHashEmbed numbers from 8).
  column.field.seed = static_cast<std::uint32_t>(argument(*embed, "seed", 8 + static_cast<std::int64_t>(column.field.column)));
  if (embed->name == "Embed.v1") column.field.keys = RowKeying::embed;
  // Rows are drawn one at a time where they are first touched, U(low, high): Thinc's uniform_init (its
  // default, -0.1 to 0.1) or zero_init fit that; the fan-scaled ones would need the whole table's shape.
  for (const auto& [key, initializer] : embed->initializers) {
    if (initializer.name == "zero_init.v1") {
      column.field.low = column.field.high = 0.0f;
    } else if (initializer.name == "uniform_init.v1") {
      const auto bound = [&](const char* name, double fallback) {
        const auto found = initializer.arguments.find(name);
        return static_cast<float>(found == initializer.arguments.end() ? fallback : std::get<double>(found->second));
      };
      column.field.low = bound("lo", -0.1);
      column.field.high = bound("hi", 0.1);
      if (column.field.high < column.field.low) return refused(*embed, "initializer: uniform_init.v1's lo is above its hi");
    } else {
      return refused(*embed, fmt::format("initializer: {} is not offered for table rows, which are drawn one at a "
                                         "time where first touched; use uniform_init.v1 or zero_init.v1",
                                         initializer.name));
    }
  }
  ++at;
  // The ids' own layers, until the pooling.
  for (; at < layers.size() && !reduce_of(layers[at]->name); ++at) {
    const auto& layer = *layers[at];
    if (holds_tables(layer)) return refused(layer, "a second table layer in one column");
    if (layer.name == "expand_window.v1") column.token_layers.push_back({layer, true});
    else if (layer.name == "with_array.v1") column.token_layers.push_back({layer.named.front().second, false});
    else return refused(layer, "expected with_array.v1, expand_window.v1 or a reduce after the HashEmbed");
  }
  if (at >= layers.size()) return refused(*embed, "expected a reduce after it (reduce_mean.v1, ...)");
  column.pooling = *reduce_of(layers[at]->name);
  ++at;
  return column;
}

bool holds_tables(const LayerSpec& spec) {
  if (is_table_layer(spec.name)) return true;
  for (const auto& [key, layer] : spec.positional)
    if (holds_tables(layer)) return true;
  for (const auto& [key, layer] : spec.named)
    if (holds_tables(layer)) return true;
  return false;
}

}  // namespace

bool graph_has_tables(const LayerSpec& graph) { return !graph.empty() && holds_tables(graph); }

bool model_has_tables(const ModelSection& model) {
  return model.graph.empty() ? names_architecture_with_tables(model.architecture) : graph_has_tables(model.graph);
}

Result<EmbeddingFront> model_table_front(const ModelSection& model) {
  if (!model.graph.empty()) {
    auto split = split_table_graph(model.graph, 1);  // the classes matter only to a SparseLinear's nO
    if (!split) return Error{split.error()};
    return split->front;
  }
  const auto entry = find_architecture(model.architecture);
  if (!entry || !has_tables(*entry)) return Error{fmt::format("architecture '{}' has no embedding tables", model.architecture)};
  auto filled = validated_settings(*entry, model.settings);
  if (!filled) return Error{filled.error()};
  return entry->tables(*filled);
}

Result<TableGraph> split_table_graph(const LayerSpec& graph, std::optional<std::size_t> classes) {
  const auto layers = sequence_of(graph);
  std::size_t at = 0;
  std::vector<Column> columns;
  if (at < layers.size() && layers[at]->name == "concatenate.v1") {
    const auto& branches = layers[at]->positional;
    for (std::size_t i = 0; i < branches.size(); ++i) {
      const auto path = sequence_of(branches[i].second);
      std::size_t inner = 0;
      auto column = read_column(path, inner, i, branches[i].second, std::nullopt);
      if (!column) return Error{column.error()};
      if (inner != path.size()) return refused(*path[inner], "only the column's table front goes inside the concatenate");
      columns.push_back(*column);
    }
    ++at;
  } else {
    // A SparseLinear that ends the model (before its softmax) takes nO from the classes, as Thinc's.
    auto column = read_column(layers, at, 0, graph, classes);
    if (!column) return Error{column.error()};
    columns.push_back(*column);
  }
  TableGraph split;
  split.front.pooling = columns.front().pooling;
  for (std::size_t i = 0; i < columns.size(); ++i) {
    if (columns[i].field.column != i)
      return Error{fmt::format("{}: HashEmbed.v1 number {} reads column {}; psgrad's table front reads the id columns "
                               "in name order, so its i-th HashEmbed must have column = i",
                               where(graph), i + 1, columns[i].field.column)};
    if (columns[i].pooling != columns.front().pooling)
      return Error{fmt::format("{}: its columns are pooled differently; psgrad pools every column with one reduce",
                               where(graph))};
    split.front.fields.push_back(columns[i].field);
    split.token_layers.push_back(columns[i].token_layers);
    if (columns[i].bias) {
      if (columns.size() > 1) return refused(graph, "SparseLinear reads one id column, not one of several");
      split.bias_width = vector_width(columns[i].field);
    }
  }
  split.dense.name = "chain.v1";
  split.dense.path = graph.path;
  for (; at < layers.size(); ++at) {
    if (holds_tables(*layers[at])) return refused(*layers[at], "a table layer after the front");
    split.dense.positional.emplace_back(layers[at]->path, *layers[at]);
  }
  if (split.dense.positional.empty() && split.bias_width == 0)
    return Error{fmt::format("{}: nothing follows the table front; the model must end in Softmax", where(graph))};
  return split;
}

}  // namespace psgrad
