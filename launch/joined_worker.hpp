// A launched worker's number is the one the server gives it when it joins (in joining order), not its
// place in the hostfile: the launch learns it from the worker's own line.
#pragma once

#include <optional>
#include <string>

namespace psgrad {

// K from "psgrad work: joined HOST:PORT as worker K of N ..." (or "joined as worker K of N ..." in a run
// with embedding tables), the line `psgrad work` prints once the server took it; nothing for any other line.
std::optional<int> joined_worker_index(const std::string& line);

}  // namespace psgrad
