// `psgrad serve`: the server side of a multi-process run (ParameterServer, driver, evaluator).
#pragma once

#include <string>

#include "apps/command.hpp"
#include "apps/run_setup.hpp"

namespace psgrad {

struct ServeOptions : RunOptions {
  ServeOptions() { command = "serve"; }
  std::string bind;  // empty: the config's cluster.host
  int port = -1;     // -1: the config's cluster.port; 0 picks a free one
  std::string port_file;  // where to write the address once listening (port_file.hpp); empty: nowhere
  std::string token;   // empty: the config's cluster.join_token
  std::string resume;  // a checkpoint to continue from
  bool remote_shards = false;  // shards 1..K-1 join from `psgrad shard` processes
  bool spawn_local_workers = false;  // `train --processes`: start the workers as child processes
  bool launched = false;  // started by `psgrad launch`: the token comes on standard input
};

Command add_serve_command(CLI::App& app);
int run_serve_command(const ServeOptions& options);

}  // namespace psgrad
