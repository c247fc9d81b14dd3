// A launched run under way: the server first, the other roles once it says where it listens, every
// role's output streamed back with its host and role, and every role stopped together.
#pragma once

#include <string>

#include "launch/launch_plan.hpp"

namespace psgrad {

// What the server is given as --port-file: a file in `folder`, a folder of the launch's own, when it runs
// on this machine; over ssh "-", its standard output, since the launch cannot read another host's files.
std::string server_port_file(const LaunchPlan& plan, const std::string& folder);

// The folder a launch makes for its server's port file, as mkdtemp takes it: for --dry-run to show.
std::string port_folder_template();

// Starts every role of the plan, streams their output until all have ended, and returns the exit code:
// 0 when every role exited 0, 128 + the signal that stopped the launch, else 1.
int run_launch(LaunchPlan plan, LaunchSettings settings, std::string token);

}  // namespace psgrad
