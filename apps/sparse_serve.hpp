// `psgrad serve` (and `train --processes`) for a model with embedding tables: the dense part, the driver
// and the evaluator here, every table shard in a `psgrad shard --tables` process, workers in `psgrad work`.
#pragma once

#include "apps/serve_command.hpp"

namespace psgrad {

// Returns the process exit code.
int run_sparse_serve(const ServeOptions& options);

}  // namespace psgrad
