// `psgrad data`: prepare (the npm digits to IDX files), debian-packages (apt's package lists to JSON
// Lines) and click-logs (made-up Criteo-like click logs).
#pragma once

#include <string>

#include "apps/command.hpp"

namespace psgrad {

Command add_data_command(CLI::App& app);
int run_data_prepare(const std::string& npm_package_dir, const std::string& out_dir);

}  // namespace psgrad
