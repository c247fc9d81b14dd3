// `psgrad shard --index i --connect HOST:PORT`: one parameter-server shard in its own process.
#pragma once

#include "apps/command.hpp"
#include "apps/connect_options.hpp"

namespace psgrad {

struct ShardOptions : ConnectOptions {
  int index = 0;  // which shard, 1..K-1 (the server holds shard 0)
  int table_index = -1;  // --tables: the table shard (0..K-1) of a sparse run to hold; -1: a weights shard
  std::string listen;  // HOST[:PORT] workers dial; default: this machine's address toward the server, any port
  // Keep trying to reach a server that is not listening yet (a Slurm task starts with its server).
  bool keep_trying = false;
};

Command add_shard_command(CLI::App& app);
int run_shard_command(const ShardOptions& options);

}  // namespace psgrad
