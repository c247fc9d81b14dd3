// Refuses a run whose embedding tables could outgrow this machine, before any row is allocated.
#pragma once

#include <cstddef>
#include <cstdint>

#include "io/config.hpp"
#include "model/result.hpp"

namespace psgrad {

// The most a shard's part of every table can take (model/table_memory.hpp), times the shards this
// process holds, against machine_bytes; the refusal is one line with the sizes.
Status check_tables_fit(const Config& config, std::size_t shards_here, std::uint64_t machine_bytes,
                        const std::string& holder = "this machine has");

// The same against this machine's memory (io/machine_memory.hpp); passes when that cannot be read.
Status check_tables_fit_machine(const Config& config, std::size_t shards_here);

}  // namespace psgrad
