// Refuses a run that needs more memory than this machine has, before its data or model is loaded.
#pragma once

#include <string>

#include "apps/run_setup.hpp"
#include "io/config.hpp"
#include "io/data_source.hpp"
#include "io/resource_estimate.hpp"
#include "model/result.hpp"

namespace psgrad {

// What this process of a `train` or `serve` run holds.
ProcessRole process_role(const RunOptions& options);

// Sizes the data from its IDX headers (the MNIST shape when they cannot be read: loading will then
// say why) and checks the estimate against this machine's memory.
Status check_fits_machine(const Config& config, const std::string& data_dir, ProcessRole role);
// The same for data already loaded.
Status check_fits_machine(const Config& config, const DataShape& data, ProcessRole role);

// Whether this process may start the threads the config's actor system needs (cluster.threads, and a
// few of CAF's own): a thread limit or an address-space limit (each thread's stack) would otherwise end
// the process with an uncaught std::system_error once the system starts them. Starts them, each
// waiting, then lets them go.
Status check_threads_start(const Config& config);

}  // namespace psgrad
