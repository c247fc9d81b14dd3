// The options `train` and `serve` share: config, overrides, data folder, saving and output levels.
#pragma once

#include <CLI/CLI.hpp>

#include "apps/run_setup.hpp"

namespace psgrad {

void add_run_options(CLI::App& command, RunOptions& options);

}  // namespace psgrad
