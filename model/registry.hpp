// Named, registered architectures and optimizers (like Thinc's @layers and @optimizers): one registry for
// every architecture, whether its parameters are dense arrays only or dense arrays and embedding tables.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/embedding_front.hpp"
#include "model/layer.hpp"
#include "model/optimizer.hpp"
#include "model/result.hpp"
#include "model/settings.hpp"

namespace psgrad {

using LayerChain = std::vector<std::unique_ptr<Layer>>;

struct Architecture {
  std::string name;  // "relu_relu_softmax.v1"
  std::string description;
  std::vector<SettingSpec> settings;
  // Builds the dense chain for input_width features and output_width classes from validated settings.
  // Behind embedding tables, its features are the pooled embeddings concatenated, then the numbers.
  std::function<LayerChain(const Settings&, std::size_t input_width, std::size_t output_width)> build;
  // Set for an architecture with embedding tables: the front validated settings describe, or why they
  // describe none (lists of different lengths). Unset: the model's parameters are dense arrays only.
  std::function<Result<EmbeddingFront>(const Settings&)> tables;
};

inline bool has_tables(const Architecture& architecture) { return static_cast<bool>(architecture.tables); }
// The settings with the architecture's defaults filled in, each checked against its spec; the error
// names the architecture and the setting.
Result<Settings> validated_settings(const Architecture& architecture, const Settings& settings);

struct OptimizerEntry {
  std::string name;  // "Adam.v1"
  std::string description;
  std::vector<SettingSpec> settings;
  std::function<std::unique_ptr<Optimizer>(const Settings&, const ParameterLayout&)> build;
};

// Registering a name twice replaces the earlier entry. The built-in entries are always present.
// A found entry is shared, so it stays valid when its name is registered again; null: not registered.
void register_architecture(Architecture architecture);
std::shared_ptr<const Architecture> find_architecture(const std::string& name);
std::vector<std::string> architecture_names();
// Whether name is a registered architecture with embedding tables.
bool names_architecture_with_tables(const std::string& name);
std::vector<std::string> architecture_names_with_tables();

void register_optimizer(OptimizerEntry optimizer);
std::shared_ptr<const OptimizerEntry> find_optimizer(const std::string& name);
std::vector<std::string> optimizer_names();

}  // namespace psgrad
