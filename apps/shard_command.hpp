// `psgrad shard --index i --connect HOST:PORT`: one parameter-server shard in its own process.
#pragma once

#include "apps/connect_options.hpp"

namespace psgrad {

struct ShardOptions : ConnectOptions {
  int index = 0;  // which shard, 1..K-1 (the server holds shard 0)
};

int run_shard_command(const ShardOptions& options);

}  // namespace psgrad
