// Replacing a file whole: after a crash it holds either its old contents or all of the new ones.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "model/result.hpp"

namespace psgrad {

// Writes the new contents through `fill` (given the descriptor of a temporary file beside `path`),
// fsyncs them, renames the temporary file over `path` and fsyncs the folder, so the new name is durable
// too. On failure the temporary file is removed and `path` keeps its old contents. Errors are one line
// naming the file, what it is (`what`: "model file") and the step that failed with strerror.
// Temporary files of `path` that a killed writer left (`path`.tmp-XXXXXX, unlocked) are removed first.
Status write_file_atomically(const std::string& path, const std::string& what,
                             const std::function<Status(int fd)>& fill);
Status write_file_atomically(const std::string& path, const std::string& what, std::string_view bytes);

// For fill functions: writes all `size` bytes through short writes and interruptions.
Status write_fully(int fd, const void* data, std::size_t size);

}  // namespace psgrad
