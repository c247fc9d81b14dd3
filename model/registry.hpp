// Named, registered architectures and optimizers (like Thinc's @layers and @optimizers).
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "model/layer.hpp"
#include "model/optimizer.hpp"
#include "model/settings.hpp"

namespace psgrad {

using LayerChain = std::vector<std::unique_ptr<Layer>>;

struct Architecture {
  std::string name;  // "relu_relu_softmax.v1"
  std::string description;
  std::vector<SettingSpec> settings;
  // Builds the chain for input_width features and output_width classes from validated settings.
  std::function<LayerChain(const Settings&, std::size_t input_width, std::size_t output_width)> build;
};

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

void register_optimizer(OptimizerEntry optimizer);
std::shared_ptr<const OptimizerEntry> find_optimizer(const std::string& name);
std::vector<std::string> optimizer_names();

}  // namespace psgrad
