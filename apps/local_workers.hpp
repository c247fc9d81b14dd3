// `train --processes`: worker processes of this very binary, started once the server listens and
// waited for once the run ended.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/child_process.hpp"

namespace psgrad {

// A child of this very binary running `command`: the join token in its environment, its output where the
// server's goes, a process group of its own and default signal handling.
ChildSpec local_child_spec(std::vector<std::string> command, const std::string& token);

// `psgrad work --connect 127.0.0.1:port --quiet [--data-dir data_dir]`, `count` times. One that cannot
// start is named on stderr.
std::vector<ChildProcess> start_local_workers(std::size_t count, std::uint16_t port, const std::string& data_dir,
                                              const std::string& token);

// Why a run still waiting for joins will not get them: fewer than `expected` of `processes` (this
// server's children) started, or the first that has already ended, with how it ended; empty while all
// run. Leaves them unreaped.
std::string ended_before_joining(const std::vector<ChildProcess>& processes, std::size_t expected);

// Waits for every worker to end; names on stderr how many failed, and returns that number.
int wait_for_local_workers(std::vector<ChildProcess>& workers);

// Ends the workers of a run that ended without them (stopped or refused before they joined, or
// failed): SIGTERM and SIGCONT (a stopped one takes it then), then waits; one still running 5 s later is
// killed. The server has said why; their own last words would only repeat it.
void stop_local_workers(std::vector<ChildProcess>& workers);

}  // namespace psgrad
