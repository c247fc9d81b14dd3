// Relative paths in a config file name files beside the config, wherever the command runs from.
#pragma once

#include <string>
#include <vector>

#include "io/config.hpp"
#include "model/result.hpp"

namespace psgrad {

// Makes data.path, data.dev_path, training.checkpoint_path and the cluster.tls_* files absolute,
// relative to config_path's folder. A path given by an override ("section.key=value", as --set passes
// it) was typed on the command line, so it stays relative to the working directory. TLS files must
// exist: their error names the config, the key and the full path looked at.
Status resolve_config_paths(Config& config, const std::string& config_path, const std::vector<std::string>& overrides);

}  // namespace psgrad
