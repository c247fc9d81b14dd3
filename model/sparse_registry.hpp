// Named architectures whose inputs are bags of ids per field rather than dense features: an embedding
// front (one HashEmbed per field, pooled, concatenated, then the numeric columns) and the dense chain
// behind it. They are kept
// apart from the dense registry, whose every entry a dense job may build from feature columns.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/hashembed.hpp"
#include "model/number_scaling.hpp"
#include "model/pooling.hpp"
#include "model/registry.hpp"
#include "model/result.hpp"

namespace psgrad {

struct EmbeddingFront {
  std::vector<HashEmbedSpec> fields;  // fields[i].column == i
  Pooling pooling = Pooling::mean;
  NumberScaling numbers = NumberScaling::as_is;  // how the numeric columns enter, after the embeddings
};

struct SparseArchitecture {
  std::string name;  // "hashembed_mlp.v1"
  std::string description;
  std::vector<SettingSpec> settings;
  // The front validated settings describe, or why they describe none (lists of different lengths).
  std::function<Result<EmbeddingFront>(const Settings&)> front;
  // The dense chain for input_width concatenated features (embeddings, then numbers) and output_width
  // classes.
  std::function<LayerChain(const Settings&, std::size_t input_width, std::size_t output_width)> build_dense;
};

// As the dense registry: registering a name twice replaces the entry; null: not registered.
void register_sparse_architecture(SparseArchitecture architecture);
std::shared_ptr<const SparseArchitecture> find_sparse_architecture(const std::string& name);
std::vector<std::string> sparse_architecture_names();

}  // namespace psgrad
