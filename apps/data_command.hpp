// `psgrad data prepare`: converts the npm package's digits to IDX files in the data folder.
#pragma once

#include <string>

#include "apps/command.hpp"

namespace psgrad {

Command add_data_command(CLI::App& app);
int run_data_prepare(const std::string& npm_package_dir, const std::string& out_dir);

}  // namespace psgrad
