// `psgrad shard --tables i`: hold table shard i of a sparse run's embedding tables.
#pragma once

#include <string>

#include "apps/connect_options.hpp"
#include "apps/shard_command.hpp"

namespace psgrad {

// Binds at listen_host:listen_port and tells workers to dial `advertised`; returns the exit code.
int run_table_shard_command(const ShardOptions& options, const ServerContact& contact, const std::string& listen_host,
                            std::uint16_t listen_port, const std::string& advertised);

}  // namespace psgrad
