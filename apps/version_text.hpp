// What `psgrad --version` prints: version, commit, library versions and vector instructions.
#pragma once

#include <string>

namespace psgrad {

std::string version_text();

}  // namespace psgrad
