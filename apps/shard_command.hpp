// `psgrad serve --shard i --connect HOST:PORT`: one parameter-server shard in its own process.
#pragma once

#include <string>

namespace psgrad {

struct ShardOptions {
  int shard = 0;
  std::string connect;  // the main server's HOST:PORT
  std::string token;
  int threads = 0;
  std::string tls_certificate, tls_key, tls_ca;
};

int run_shard_command(const ShardOptions& options);

}  // namespace psgrad
