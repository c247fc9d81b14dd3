// A model over bags of ids and numeric columns: an embedding front (one HashEmbed per field, pooled,
// concatenated, then the numbers) whose tables live elsewhere — a batch's rows are handed in, their
// gradients handed back — and a dense Model behind it on one weight buffer, as every dense model.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "model/aligned_floats.hpp"
#include "model/hashembed.hpp"
#include "model/front_layers.hpp"
#include "model/model.hpp"
#include "model/pooling.hpp"
#include "model/ragged_ids.hpp"
#include "model/sparse_dataset.hpp"
#include "model/embedding_front.hpp"
#include "model/job.hpp"
#include "model/registry.hpp"
#include "model/sparse_rows.hpp"

namespace psgrad {

// Which table rows one batch touches: per field, its pull list and where each id's rows are in it; and
// the batch's numbers, scaled as the model takes them.
struct BatchLookup {
  std::size_t examples = 0;
  std::vector<FieldLookup> fields;
  std::vector<float> numbers;  // examples x the model's number columns, row-major
};

class SparseModel {
 public:
  // number_names: the numeric columns it reads after the embeddings, in their order within a row.
  // column_layers: per field, the layers its ids pass through before their pooling (none: empty).
  SparseModel(EmbeddingFront front, LayerChain dense_chain, std::string architecture,
              std::vector<std::string> number_names = {}, std::vector<LayerList> column_layers = {});

  // Builds a registered sparse architecture from settings; unknown names and bad settings are errors.
  static Result<SparseModel> build(const std::string& architecture, const Settings& settings,
                                   std::size_t output_width, std::vector<std::string> number_names = {});
  // What a config's [model] describes: an architecture with tables, or a graph of Thinc's layers with
  // a table front (model/table_graph.hpp).
  static Result<SparseModel> build(const ModelSection& model, std::size_t output_width,
                                   std::vector<std::string> number_names = {});
  // Built for a data set's layout: its classes and number columns; refused in one line when the settings
  // declare other id fields than it has. data_name says which set in that line ("training data").
  static Result<SparseModel> build_for_data(const std::string& architecture, const Settings& settings,
                                            const SparseDataset& data, const std::string& data_name);
  static Result<SparseModel> build_for_data(const ModelSection& model, const SparseDataset& data,
                                            const std::string& data_name);

  // Whether data has the inputs this model reads: as many id fields, the same number columns in the same
  // order. The refusal is one line naming data_name and both layouts.
  Status check_inputs(const SparseDataset& data, const std::string& data_name) const;

  const std::string& architecture() const { return dense_.architecture(); }
  const std::vector<HashEmbedSpec>& fields() const { return front_.fields; }
  Pooling pooling() const { return front_.pooling; }
  NumberScaling number_scaling() const { return front_.numbers; }
  const std::vector<std::string>& number_names() const { return number_names_; }
  std::size_t number_width() const { return number_names_.size(); }
  std::size_t embedded_width() const { return embedded_width_; }  // the pooled embeddings, concatenated
  // Field f's width after its column layers, as it is pooled.
  std::size_t pooled_width(std::size_t f) const;
  std::size_t input_width() const { return embedded_width_ + number_names_.size(); }  // the dense chain's
  std::size_t output_width() const { return dense_.output_width(); }
  // The dense part: its weights, layout, initialize() and gradient buffer.
  Model& dense() { return dense_; }
  const Model& dense() const { return dense_; }

  // The rows a batch needs: batch holds one RaggedIds per field, all with the same examples; numbers
  // holds their number columns (examples x number_width(), row-major), none for a model without them.
  Result<BatchLookup> look_up(const std::vector<RaggedIds>& batch, const std::vector<float>& numbers = {}) const;

  // Forward with dropout, loss gradient (probs - targets) / n, backward. rows holds per field the rows
  // of lookup.fields[f].keys. Writes the dense gradient into the dense model's gradient buffer, and
  // per field the gradient of each of those rows into row_gradients[f] (same keys, same order).
  // Returns the mean cross-entropy.
  float compute_gradients(const BatchLookup& lookup, const std::vector<SparseRows>& rows,
                          const ConstMatrixMap& targets, Random& dropout_rng,
                          std::vector<SparseRows>& row_gradients);
  // The same on caller-owned dense buffers laid out by dense().layout() and 64-byte aligned.
  float compute_gradients(const float* weights, float* gradients, const BatchLookup& lookup,
                          const std::vector<SparseRows>& rows, const ConstMatrixMap& targets, Random& dropout_rng,
                          std::vector<SparseRows>& row_gradients);

  // Class probabilities without dropout; valid until the next call on this model.
  ConstMatrixMap predict(const BatchLookup& lookup, const std::vector<SparseRows>& rows);
  // Accuracy and mean cross-entropy of a whole set (a dev set's lookup and rows), forward in batches of
  // batch_size, with caller-owned dense weights (laid out by dense().layout(), 64-byte aligned).
  Evaluation evaluate(const float* weights, const BatchLookup& lookup, const std::vector<SparseRows>& rows,
                      const ConstMatrixMap& targets, std::size_t batch_size);

 private:
  // The dense chain's input for a batch (examples x input_width): the pooled, concatenated embeddings,
  // then the numbers. The column layers run on the weights dense_ is bound to; rng draws their dropout.
  ConstMatrixMap embed(const BatchLookup& lookup, const std::vector<SparseRows>& rows, bool is_train, Random& rng);
  void backpropagate_front(const BatchLookup& lookup, std::vector<SparseRows>& row_gradients);

  EmbeddingFront front_;
  std::vector<std::string> number_names_;
  // The dense chain's first layer, owned by dense_; declared first because dense_'s construction sets it.
  FrontLayers* front_layers_ = nullptr;
  std::size_t embedded_width_ = 0;
  Model dense_;
  AlignedFloats embedded_;
  // Per field: its ids' vectors (kept for the column layers' backward and max pooling), what was pooled
  // (the vectors, or the column layers' output), and the ids its column layers are sized for.
  std::vector<std::vector<float>> id_vectors_;
  std::vector<const float*> pooled_rows_;
  std::vector<std::size_t> reserved_ids_;
  std::vector<float> d_pooled_rows_;  // one field's gradient of what was pooled
  Random no_dropout_rng_;
};

}  // namespace psgrad
