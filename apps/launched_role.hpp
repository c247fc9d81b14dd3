// Roles started by `psgrad launch` (--launched): the join token arrives as the first line of standard
// input, never on a command line, and standard input closing stops the process, so a launch that stops
// or whose ssh connection drops leaves nothing running.
#pragma once

#include <string>

#include "model/result.hpp"

namespace psgrad {

// Who gets the first signal when standard input ends: the server stops at once (saving the run, then
// stopping its workers); workers and shards leave that to it and give themselves 10 s first, since a
// worker killed while the server finishes its step would cost the run its last step.
enum class LaunchedAs { server, follower };

// Reads the token line, then watches standard input on a thread of its own: at its end the process
// gets SIGTERM (at once for the server, after 10 s for the others), and the server SIGTERM again 10 s
// later if it is still there; a line "stop now" sends both at once (a server waiting for workers exits
// at once).
Result<std::string> take_launch_token(LaunchedAs role);

}  // namespace psgrad
