// `psgrad work`: joins a server with one DataWorker and serves gradient requests until it is done.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "apps/command.hpp"
#include "apps/connect_options.hpp"

namespace psgrad {

struct WorkOptions : ConnectOptions {
  std::string data;  // a data folder of IDX files, or the directory of named data sets
  bool retry = false;  // keep trying to reach the server for much longer
  bool quiet = false;
  // --server-wait-ms: this worker's cluster.server_wait_ms, instead of the server's.
  std::optional<std::int64_t> server_wait_ms;
};

Command add_work_command(CLI::App& app);
int run_work_command(const WorkOptions& options);

}  // namespace psgrad
