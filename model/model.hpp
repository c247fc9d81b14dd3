// A model: a chain of layers whose parameters live in one contiguous weight buffer and whose gradients
// live in a second buffer of the same layout, so weights and gradients travel as single buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/aligned_floats.hpp"
#include "model/job.hpp"
#include "model/matrix.hpp"
#include "model/parameter_layout.hpp"
#include "model/random.hpp"
#include "model/registry.hpp"
#include "model/result.hpp"

namespace psgrad {

struct Evaluation {
  double accuracy = 0.0;
  double loss = 0.0;  // mean cross-entropy
  std::size_t count = 0;
};

class Model {
 public:
  Model(LayerChain layers, std::string architecture);
  Model(Model&&) = default;
  Model& operator=(Model&&) = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  // Builds a registered architecture from validated settings; unknown names are an error.
  static Result<Model> build(const std::string& architecture, const Settings& settings,
                             std::size_t input_width, std::size_t output_width);
  // Builds what a config's [model] describes: a registered architecture or a graph of Thinc's layers.
  static Result<Model> build(const ModelSection& model, std::size_t input_width, std::size_t output_width);

  // Draws initial weights from a generator seeded with seed.
  void initialize(std::uint64_t seed);
  // Sizes every activation buffer for batches up to max_batch (done on demand too, once).
  void reserve(std::size_t max_batch);

  const std::string& architecture() const { return architecture_; }
  const ParameterLayout& layout() const { return layout_; }
  std::size_t input_width() const;
  std::size_t output_width() const;
  std::size_t parameter_count() const { return layout_.total_size(); }

  const AlignedFloats& weights() const { return weights_; }
  float* weights_data() { return weights_.data(); }
  void set_weights(const float* weights, std::size_t size);
  const AlignedFloats& gradients() const { return gradients_; }
  float* gradients_data() { return gradients_.data(); }
  // Points every layer at these buffers (laid out by layout(), 64-byte aligned) before layers are run
  // outside this model's own calls (a tables model's column layers, which lie in this buffer).
  void use_buffers(const float* weights, float* gradients) { bind_buffers(weights, gradients); }

  // Forward with dropout from dropout_rng, loss gradient (probs - targets) / n, backward. Overwrites
  // the gradient buffer (fresh per batch, never accumulated) and returns the mean cross-entropy.
  float compute_gradients(const ConstMatrixMap& inputs, const ConstMatrixMap& targets,
                          Random& dropout_rng);
  // The same on caller-owned buffers laid out by layout() and 64-byte aligned: reads `weights`
  // (e.g. a received message) and writes the gradient into `gradients` (e.g. an outgoing payload),
  // so a worker copies nothing in or out.
  float compute_gradients(const float* weights, float* gradients, const ConstMatrixMap& inputs,
                          const ConstMatrixMap& targets, Random& dropout_rng);
  // Class probabilities without dropout; valid until the next call on this model.
  ConstMatrixMap predict(const ConstMatrixMap& inputs);
  // Accuracy (argmax agreement) and loss over all rows, in batches of batch_size.
  Evaluation evaluate(const ConstMatrixMap& inputs, const ConstMatrixMap& targets,
                      std::size_t batch_size);
  // The same with caller-owned weights (laid out by layout(), 64-byte aligned), without copying them.
  Evaluation evaluate(const float* weights, const ConstMatrixMap& inputs, const ConstMatrixMap& targets,
                      std::size_t batch_size);

 private:
  ConstMatrixMap forward(const ConstMatrixMap& inputs, bool is_train, Random& rng);
  // Points every layer at these buffers (no-op when they already are).
  void bind_buffers(const float* weights, float* gradients);
  float backpropagate(const ConstMatrixMap& inputs, const ConstMatrixMap& targets, Random& dropout_rng);

  std::string architecture_;
  LayerChain layers_;
  ParameterLayout layout_;
  AlignedFloats weights_;
  AlignedFloats gradients_;
  const float* bound_weights_ = nullptr;
  float* bound_gradients_ = nullptr;
  std::size_t reserved_rows_ = 0;
  Matrix d_logits_;
  Random no_dropout_rng_;
};

}  // namespace psgrad
