// Roles started by `psgrad launch` (--launched): the join token arrives as the first line of standard
// input, never on a command line, and standard input closing stops the process, so a launch that stops
// or whose ssh connection drops leaves nothing running.
#pragma once

#include <string>

#include "model/result.hpp"

namespace psgrad {

// Reads the token line, then watches standard input on a thread of its own: at its end the process
// gets SIGTERM (a server saves the run), and SIGTERM again 10 s later if it is still there; a line
// "stop now" sends both at once (a server waiting for workers exits at once).
Result<std::string> take_launch_token();

}  // namespace psgrad
