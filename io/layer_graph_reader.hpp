// Reads a [model] section written in Thinc's model language: "@layers" names one of Thinc's layers,
// its arguments are keys, its positional layers [model.*.name] sections (in the order they are
// written) and its named layers [model.layer] sections, nested as deep as the model is.
#pragma once

#include <string>

#include <toml++/toml.h>

#include "io/config_validator.hpp"
#include "model/layer_spec.hpp"
#include "model/result.hpp"

namespace psgrad {

// Whether a [model] section's "@layers" names one of Thinc's layers rather than an architecture.
bool names_layer_graph(const toml::table* section);

// The section at path ("model") as a layer graph; every argument checked against its layer's, errors in
// one line naming the section and key.
Result<LayerSpec> read_layer_graph(const toml::table& section, const std::string& path, const Validator& validator);

}  // namespace psgrad
