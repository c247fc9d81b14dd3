// The layers of a model's table front: HashEmbed, Embed, SparseLinear, list2ragged, the reduces (which
// the engine runs on id columns, model/table_graph.hpp) and expand_window.
#include "model/layer_entries.hpp"

#include "model/expand_window.hpp"

namespace psgrad {

namespace {

// Layers of a model's table front (model/table_graph.hpp): the engine runs them on id columns, so a
// chain of dense layers reaching one is a graph the table front did not take.
LayerEntry table_front_entry(const char* name, const char* description, std::vector<SettingSpec> arguments) {
  LayerEntry entry;
  entry.name = name;
  entry.description = description;
  entry.arguments = std::move(arguments);
  entry.build = [](const LayerSpec& spec, const Settings&, std::size_t, std::optional<std::size_t>,
                   const ChildBuilder&) -> Result<LayerList> {
    return layer_error(spec, "reads id columns: it belongs to the model's table front, before its dense layers");
  };
  return entry;
}

// An embedding table's arguments: nO, nV, (HashEmbed's seed,) column and dropout; its rows' initializer.
LayerEntry embedding_entry(const char* name, const char* description, bool hashed) {
  std::vector<SettingSpec> arguments = {
      {"nO", SettingKind::integer, SettingValue{std::int64_t{0}}, "Width of each row (required).", 1.0, 1 << 20},
      {"nV", SettingKind::integer, SettingValue{std::int64_t{0}}, "Rows of the table (required).", 1.0, 4294967296.0}};
  if (hashed)
    arguments.push_back({"seed", SettingKind::integer, SettingValue{std::int64_t{8}},
                         "Hash seed; not set: 8 + column (Thinc draws it from the layer's id).", 0.0, 4294967295.0});
  arguments.push_back({"column", SettingKind::integer, SettingValue{std::int64_t{0}},
                       "Which id column it reads (the data's id columns in name order).", 0.0, 1 << 16});
  arguments.push_back({"dropout", SettingKind::number, SettingValue{0.0},
                       "Not supported: put Dropout.v1 after the pooling.", 0.0, 1.0, true});
  auto entry = table_front_entry(name, description, std::move(arguments));
  entry.initializer_arguments = {"initializer"};
  return entry;
}

LayerEntry sparse_linear_entry(const char* name, const char* description) {
  return table_front_entry(
      name, description,
      {{"nO", SettingKind::integer, SettingValue{std::int64_t{0}}, "Outputs (not set: the classes).", 1.0, 1 << 16},
       {"length", SettingKind::integer, SettingValue{std::int64_t{1} << 18}, "Rows of its weight table.", 1.0,
        4294967296.0}});
}

// On a matrix the whole array is one sequence, as Thinc's expand_window on a Floats2d; in a table front
// directly on a column's Ragged (model/table_graph.hpp) its windows stop at each example's ends.
LayerEntry expand_window_entry() {
  LayerEntry entry;
  entry.name = "expand_window.v1";
  entry.description = "Each row with its window_size neighbours on either side, side by side (zeros past an end).";
  entry.arguments = {{"window_size", SettingKind::integer, SettingValue{std::int64_t{1}},
                      "Rows taken on either side.", 1.0, 64.0}};
  entry.build = [](const LayerSpec&, const Settings& arguments, std::size_t input_width, std::optional<std::size_t>,
                   const ChildBuilder&) -> Result<LayerList> {
    LayerList layers;
    layers.push_back(std::make_unique<ExpandWindow>(
        input_width, static_cast<std::size_t>(get_integer(arguments, "window_size")), false));
    return layers;
  };
  return entry;
}

}  // namespace

std::vector<LayerEntry> table_front_entries() {
  return {
      embedding_entry("HashEmbed.v1", "An embedding table by the hashing trick: four hashed rows summed per id.", true),
      embedding_entry("Embed.v1", "An embedding table indexed by the id itself (ids must be below nV).", false),
      sparse_linear_entry("SparseLinear.v1", "A hashed linear model of a bag of ids, with Thinc's v1 indexing: "
                                             "overlapping windows of nO weights at hash & (length - 1)."),
      sparse_linear_entry("SparseLinear.v2", "A hashed linear model of a bag of ids: two hashed rows of nO per id, "
                                             "summed, plus a bias."),
      table_front_entry("list2ragged.v1", "A list of sequences as one Ragged.", {}),
      table_front_entry("reduce_sum.v1", "One row per sequence: the sum of its rows.", {}),
      table_front_entry("reduce_mean.v1", "One row per sequence: the mean of its rows.", {}),
      table_front_entry("reduce_max.v1", "One row per sequence: each column's largest value.", {}),
      table_front_entry("reduce_first.v1", "One row per sequence: its first row.", {}),
      table_front_entry("reduce_last.v1", "One row per sequence: its last row.", {}),
      expand_window_entry(),
  };
}

}  // namespace psgrad
