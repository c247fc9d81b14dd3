#include "apps/local_table_shards.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "apps/connect_options.hpp"

namespace psgrad {

std::vector<ChildProcess> start_local_table_shards(std::size_t count, std::uint16_t port, const std::string& token) {
  std::vector<ChildProcess> shards;
  for (std::size_t i = 0; i < count; ++i) {
    ChildSpec spec;
    spec.command = {"psgrad", "shard", "--tables", std::to_string(i), "--connect",
                    fmt::format("127.0.0.1:{}", port), "--listen", "127.0.0.1"};
    spec.executable = "/proc/self/exe";
    // As for worker processes: the token in the environment, a process group of their own, default signals.
    spec.environment = {std::string(join_token_variable) + "=" + token};
    spec.streams = ChildStreams::inherited;
    spec.own_process_group = true;
    spec.default_signals = true;
    auto shard = ChildProcess::start(spec);
    if (shard)
      shards.push_back(std::move(*shard));
    else
      fmt::print(stderr, "psgrad: could not start table shard process {}\n", i);
  }
  return shards;
}

}  // namespace psgrad
