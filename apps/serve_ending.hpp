// What every `psgrad serve` does as it starts listening and as it ends, whatever its model: one rule
// for the port file and one for the exit code, so a launch reads every server alike.
#pragma once

#include <optional>
#include <string>

#include "apps/port_file.hpp"

namespace psgrad {

// Writes where the server listens. When that fails, says so and stops the server as SIGTERM would:
// whoever waits for the file would otherwise wait for ever, and nobody has joined yet.
void write_port_file_or_stop(std::optional<PortFile>& port_file, const ServedAddress& address,
                             const std::string& command);

// The server's exit code: 128 + the signal that stopped it before or while training (as a shell
// reports it), else the run's own. One rule for every lost worker, on this host or another: a run that
// finished with fewer workers than it started succeeded (its summary names the lost ones), so a worker
// process of its own that failed is said (wait_for_local_workers) but does not fail it.
int serve_exit_code(int run_code, int signal_received);

}  // namespace psgrad
