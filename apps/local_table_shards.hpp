// `train --processes` for a model with embedding tables: a table shard process of this very binary for
// each shard, started once the server listens, as the worker processes are.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "apps/child_process.hpp"

namespace psgrad {

// `psgrad shard --tables i --connect 127.0.0.1:port --listen 127.0.0.1` for i in 0 .. count - 1.
// One that cannot start is named on stderr.
std::vector<ChildProcess> start_local_table_shards(std::size_t count, std::uint16_t port, const std::string& token);

}  // namespace psgrad
