// Whether a file a run will write can be written, checked before the run starts rather than found
// out at its end.
#pragma once

#include <string>

#include "model/result.hpp"

namespace psgrad {

// Refuses a path that names something other than a regular file (a folder, a device, a FIFO, a
// socket: replacing one would put a regular file in its place, and writing to a FIFO would block),
// and one whose file cannot be created: a folder that does not exist or takes no new files, a name
// too long. Creates and removes a temporary file beside `path`, named as the writers name theirs.
// `what` says which file it is ("checkpoint (training.checkpoint_path)"). One line naming the path.
Status check_output_path(const std::string& path, const std::string& what);

// Only the first half: nothing but a regular file, or nothing at all, may stand at `path`. For the
// writers themselves, since something may have appeared there while the run trained.
Status check_replaceable(const std::string& path, const std::string& what);

}  // namespace psgrad
