#include "apps/local_table_shards.hpp"

#include <cstdio>

#include <fmt/format.h>

#include "apps/local_workers.hpp"

namespace psgrad {

std::vector<ChildProcess> start_local_table_shards(std::size_t count, std::uint16_t port, const std::string& token) {
  std::vector<ChildProcess> shards;
  for (std::size_t i = 0; i < count; ++i) {
    const auto spec = local_child_spec({"psgrad", "shard", "--tables", std::to_string(i), "--connect",
                                        fmt::format("127.0.0.1:{}", port), "--listen", "127.0.0.1"},
                                       token);
    auto shard = ChildProcess::start(spec);
    if (shard)
      shards.push_back(std::move(*shard));
    else
      fmt::print(stderr, "psgrad: could not start table shard process {}\n", i);
  }
  return shards;
}

}  // namespace psgrad
