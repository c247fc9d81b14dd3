// The files a train or serve run writes, checked before it loads its data: a run that could not save
// its results is refused at its start, not found out at its end.
#pragma once

#include "apps/run_setup.hpp"
#include "io/config.hpp"
#include "model/result.hpp"

namespace psgrad {

// --save, --save-weights, --trace, --metrics and training.checkpoint_path (check_output_path).
Status check_run_outputs(const RunOptions& options, const Config& config);

}  // namespace psgrad
