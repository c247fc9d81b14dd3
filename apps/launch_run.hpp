// A launched run under way: the server first, the other roles once it says where it listens, every
// role's output streamed back with its host and role, and every role stopped together.
#pragma once

#include <string>

#include "launch/launch_plan.hpp"

namespace psgrad {

// Starts every role of the plan, streams their output until all have ended, and returns the exit code:
// 0 when every role exited 0, 128 + the signal that stopped the launch, else 1.
int run_launch(LaunchPlan plan, LaunchSettings settings, std::string token);

}  // namespace psgrad
