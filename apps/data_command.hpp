// `psgrad data prepare`: converts the npm package's digits to IDX files in the data folder.
#pragma once

#include <string>

namespace psgrad {

int run_data_prepare(const std::string& npm_package_dir, const std::string& out_dir);

}  // namespace psgrad
