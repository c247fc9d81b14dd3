#include "model/table_graph.hpp"

#include <optional>

#include <fmt/format.h>

#include "model/registry.hpp"

namespace psgrad {

namespace {

constexpr const char* kHashEmbed = "HashEmbed.v1";
constexpr const char* kLayout =
    "a model with tables starts with its table front: per id column [list2ragged.v1 >>] "
    "with_array.v1(HashEmbed.v1) [>> with_array.v1(layer) or expand_window.v1 ...] >> reduce_sum.v1, reduce_mean.v1, "
    "reduce_max.v1, reduce_first.v1 or reduce_last.v1, several columns in a concatenate.v1";

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
};

std::optional<Pooling> reduce_of(const std::string& name) {
  for (const char* pooling : {"sum", "mean", "max", "first", "last"})
    if (name == std::string("reduce_") + pooling + ".v1") return pooling_named(pooling);
  return std::nullopt;
}

// One column's path at layers[at...]: [list2ragged] >> HashEmbed or with_array(HashEmbed) >> reduce_*.
// Moves at past it.
Result<Column> read_column(const std::vector<const LayerSpec*>& layers, std::size_t& at, std::size_t default_column,
                           const LayerSpec& owner) {
  if (at < layers.size() && layers[at]->name == "list2ragged.v1") ++at;
  if (at >= layers.size()) return refused(owner, "its table front ends before its HashEmbed.v1");
  const LayerSpec* embed = layers[at];
  if (embed->name == "with_array.v1") {
    if (argument(*embed, "pad", 0) != 0) return refused(*embed, "pad is for padded sequences, which psgrad has none of");
    embed = &embed->named.front().second;
  }
  if (embed->name != kHashEmbed) return refused(*layers[at], "expected HashEmbed.v1 here");
  if (embed->arguments.count("dropout"))
    return refused(*embed, "dropout on a HashEmbed is not supported; put Dropout.v1 after the pooling");
  Column column;
  column.field.width = static_cast<std::size_t>(argument(*embed, "nO", 0));
  column.field.rows = static_cast<std::uint64_t>(argument(*embed, "nV", 0));
  if (column.field.width == 0 || column.field.rows == 0) return refused(*embed, "nO and nV must be set");
  column.field.column = static_cast<std::size_t>(argument(*embed, "column", static_cast<std::int64_t>(default_column)));
  // Thinc draws an unset seed from the layer's id, which differs from process to process; psgrad, which
  // must give every worker and shard the same keys, takes 8 + column (spaCy's MultiHashEmbed numbers from 8).
  column.field.seed = static_cast<std::uint32_t>(argument(*embed, "seed", 8 + static_cast<std::int64_t>(column.field.column)));
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
  if (spec.name == kHashEmbed) return true;
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
    auto split = split_table_graph(model.graph);
    if (!split) return Error{split.error()};
    return split->front;
  }
  const auto entry = find_architecture(model.architecture);
  if (!entry || !has_tables(*entry)) return Error{fmt::format("architecture '{}' has no embedding tables", model.architecture)};
  auto filled = validated_settings(*entry, model.settings);
  if (!filled) return Error{filled.error()};
  return entry->tables(*filled);
}

Result<TableGraph> split_table_graph(const LayerSpec& graph) {
  const auto layers = sequence_of(graph);
  std::size_t at = 0;
  std::vector<Column> columns;
  if (at < layers.size() && layers[at]->name == "concatenate.v1") {
    const auto& branches = layers[at]->positional;
    for (std::size_t i = 0; i < branches.size(); ++i) {
      const auto path = sequence_of(branches[i].second);
      std::size_t inner = 0;
      auto column = read_column(path, inner, i, branches[i].second);
      if (!column) return Error{column.error()};
      if (inner != path.size()) return refused(*path[inner], "only the column's table front goes inside the concatenate");
      columns.push_back(*column);
    }
    ++at;
  } else {
    auto column = read_column(layers, at, 0, graph);
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
  }
  split.dense.name = "chain.v1";
  split.dense.path = graph.path;
  for (; at < layers.size(); ++at) {
    if (holds_tables(*layers[at])) return refused(*layers[at], "a table layer after the front");
    split.dense.positional.emplace_back(layers[at]->path, *layers[at]);
  }
  if (split.dense.positional.empty())
    return Error{fmt::format("{}: nothing follows the table front; the model must end in Softmax", where(graph))};
  return split;
}

}  // namespace psgrad
