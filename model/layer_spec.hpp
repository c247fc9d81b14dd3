// A model written in Thinc's model language: a registered layer ("Relu.v1"), its arguments (nO,
// dropout, ...) and the layers it takes, positional ([model.*.name]) or named ([model.layer]).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "model/settings.hpp"

namespace psgrad {

struct LayerSpec;
using NamedLayerSpecs = std::vector<std::pair<std::string, LayerSpec>>;

// A registered initializer ("he_normal_init.v1") and its arguments as written: a layer's init_W or init_b.
struct InitializerSpec {
  std::string name;
  Settings arguments;
  bool operator==(const InitializerSpec& other) const { return name == other.name && arguments == other.arguments; }
  bool operator!=(const InitializerSpec& other) const { return !(*this == other); }
};
using NamedInitializers = std::vector<std::pair<std::string, InitializerSpec>>;

struct LayerSpec {
  std::string name;          // "Relu.v1"; empty: no layer graph
  Settings arguments;        // as written: the defaults are the layer's own
  NamedLayerSpecs positional;  // chain's layers, in the order they were written
  NamedLayerSpecs named;       // residual's "layer", clone's "orig"
  NamedInitializers initializers;  // [x.init_W] sections: Relu's "init_W" and "init_b"
  std::string path;          // "model.*.relu1", for messages; not part of the value

  bool empty() const { return name.empty(); }
  bool operator==(const LayerSpec& other) const {
    return name == other.name && arguments == other.arguments && positional == other.positional &&
           named == other.named && initializers == other.initializers;
  }
  bool operator!=(const LayerSpec& other) const { return !(*this == other); }
};

}  // namespace psgrad
