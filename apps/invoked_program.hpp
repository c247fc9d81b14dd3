// How this process was invoked, so that the commands its hints print ("resume with: ...") run as
// printed: `build/apps/psgrad` from a build folder, `psgrad` from PATH.
#pragma once

#include <string>

namespace psgrad {

// From main's argv[0]; until then (the Python module), "psgrad".
void set_invoked_program(const char* argv0);

// argv[0] shell-quoted when it names a file by path, else "psgrad".
const std::string& invoked_program();

}  // namespace psgrad
