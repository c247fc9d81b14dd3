// `psgrad config show|check|reference`: the resolved config, its validation, and the settings reference.
#pragma once

#include <string>
#include <vector>

#include "apps/command.hpp"

namespace psgrad {

struct ConfigOptions {
  std::string action;  // "show", "check" or "reference": the subcommand that was parsed
  std::string config_path;
  std::string format = "toml";  // show: "toml" or "cfg"
  std::vector<std::string> overrides;
};

Command add_config_command(CLI::App& app);
int run_config_command(const ConfigOptions& options);

}  // namespace psgrad
