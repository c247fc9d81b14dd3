// The output options `train` and `serve` share: --quiet, --verbose, --metrics, --no-metrics, --save.
#pragma once

#include <CLI/CLI.hpp>

#include "apps/run_setup.hpp"

namespace psgrad {

void add_run_output_options(CLI::App& command, RunOptions& options);

}  // namespace psgrad
