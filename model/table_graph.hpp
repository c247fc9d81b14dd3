// A layer graph with embedding tables, read as the engine runs it: its table front (one HashEmbed per id
// column, its ids through with_array layers or expand_window, pooled by a reduce, concatenated) and the
// dense layers behind it.
//
// Thinc's types: a column's input is per example a sequence of ids (List[Ints1d]); list2ragged.v1 makes it
// a Ragged, with_array.v1(HashEmbed.v1) embeds every id (Ragged of Floats2d), reduce_mean.v1 gives one row
// per example (Floats2d). Several id columns: concatenate.v1 of one such chain per column, HashEmbed's
// column naming which (the data's id columns in name order).
#pragma once

#include <optional>

#include "model/embedding_front.hpp"
#include "model/job.hpp"
#include "model/layer_spec.hpp"
#include "model/result.hpp"

namespace psgrad {

// What a column's ids pass through between its HashEmbed and its pooling: with_array.v1's layer on the
// array of all the batch's ids (as Thinc's with_array hands a Ragged's data), or expand_window.v1 on the
// Ragged itself (windows within each example).
struct TokenLayer {
  LayerSpec layer;
  bool ragged = false;
};

struct TableGraph {
  EmbeddingFront front;
  std::vector<std::vector<TokenLayer>> token_layers;  // per id column, in the front's field order
  // SparseLinear's bias (0: none): a learned shift of the summed rows, before the dense layers.
  std::size_t bias_width = 0;
  LayerSpec dense;  // chain.v1 of the layers after the front; may be empty after a SparseLinear
};

// Whether the graph holds a table layer (HashEmbed.v1) anywhere.
bool graph_has_tables(const LayerSpec& graph);
// Whether the model has embedding tables: an architecture with tables, or a graph with a table layer.
bool model_has_tables(const ModelSection& model);

// The table front of a model with tables, from its architecture's settings or its graph.
Result<EmbeddingFront> model_table_front(const ModelSection& model);

// The front and the dense rest of a graph with tables; refused in one line, naming the layer, where the
// graph has its tables elsewhere than at its front.
// classes: the data's, for a SparseLinear without nO.
Result<TableGraph> split_table_graph(const LayerSpec& graph, std::optional<std::size_t> classes = std::nullopt);

}  // namespace psgrad
