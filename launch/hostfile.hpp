// Hostfiles as MPI and DeepSpeed write them: one `HOST [workers=N] [shards=K]` per line.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "model/result.hpp"

namespace psgrad {

constexpr int max_launched_workers = 1024;  // cluster.num_workers's bound
constexpr int max_launched_shards = 64;

struct HostLine {
  std::string host;  // as ssh takes it: NAME, ADDRESS or USER@NAME
  int workers = 0;
  int shards = 0;
  int line = 0;  // in the hostfile, from 1
};

// The first host serves; unless its line says otherwise it runs no workers, and every other host runs
// one worker. `#` starts a comment; blank lines are skipped. Errors are one line:
// "hosts.txt:3: unknown field 'slots=2'; expected workers=N or shards=K".
Result<std::vector<HostLine>> parse_hostfile(std::string_view text, const std::string& file_name);

// Reads and parses the file (a regular file of at most 1 MiB).
Result<std::vector<HostLine>> read_hostfile(const std::string& path);

}  // namespace psgrad
