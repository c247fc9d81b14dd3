// What a run builds from its config before it trains, built once ahead of it, so that `psgrad config
// check` accepts only configs whose runs can start.
#pragma once

#include <cstdint>

#include "io/config.hpp"
#include "model/result.hpp"

namespace psgrad {

// Builds the model for data of this shape, its optimizer and learning-rate schedule, and the split
// of its weights over cluster.servers shards. The error is one line: "<config>: <key>: <problem>".
Status check_run_plan(const Config& config, std::uint64_t input_width, std::uint64_t classes);

}  // namespace psgrad
