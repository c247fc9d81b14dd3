// Quoting for a POSIX shell: how a remote command line keeps each argument whole through ssh.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace psgrad {

// 'text', with each ' written as '\'' ; plain words (letters, digits, -_./:=@,+%) stay as they are.
std::string shell_quoted(std::string_view text);

// The words quoted and joined by spaces: one command line for `sh -c`.
std::string shell_command(const std::vector<std::string>& words);

}  // namespace psgrad
