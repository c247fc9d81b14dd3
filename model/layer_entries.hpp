// The entries of Thinc's layers, by kind, for model/layer_registry.cpp: dense layers, combinators, and
// the layers of a table front (tables and sequences). Internal to model/.
#pragma once

#include <string>
#include <vector>

#include "model/layer_registry.hpp"

namespace psgrad {

// Where a spec is, for messages: its config path, or its name when it has none.
inline std::string layer_where(const LayerSpec& spec) { return spec.path.empty() ? spec.name : spec.path; }

inline Error layer_error(const LayerSpec& spec, const std::string& problem) {
  return Error{layer_where(spec) + ": " + spec.name + ": " + problem};
}

std::vector<LayerEntry> dense_layer_entries();
std::vector<LayerEntry> combinator_entries();
std::vector<LayerEntry> table_front_entries();

}  // namespace psgrad
