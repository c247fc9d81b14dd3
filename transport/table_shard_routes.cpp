#include "transport/table_shard_routes.hpp"

#include <chrono>
#include <thread>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "caf/openssl/all.hpp"
#include "transport/gated_dial.hpp"
#include "transport/network_words.hpp"

namespace psgrad {

Result<TableShardPort> TableShardPort::open(caf::actor_system& system, const EmbeddingShardActor& shard,
                                            const ShardListenSetup& setup) {
  TableShardPort port;
  port.host_ = setup.advertised.empty() ? setup.host : setup.advertised;
  if (setup.tls) {
    auto opened = caf::openssl::publish(shard, setup.port, setup.host.c_str(), true);
    if (!opened) return Error{listen_failure_text(system, opened.error(), setup.host, setup.port)};
    port.port_ = *opened;
    return port;
  }
  auto opened = ConnectionGate::open(
      system, gate_publishing(system, shard, setup.host, setup.port, setup.token, protocol_version, setup.on_event));
  if (!opened) return Error{opened.error()};
  port.port_ = (*opened)->port();
  port.gate_ = std::move(opened).value();
  return port;
}

namespace {

Result<caf::actor_addr> dial_once(caf::actor_system& system, const TableShardAddress& address,
                                  const std::string& token, bool tls, bool& refused) {
  if (tls) {
    auto shard = caf::openssl::remote_actor<EmbeddingShardActor>(system, address.host, address.port);
    if (shard) return shard->address();
    return Error{connect_failure_text(system, shard.error(), address.host, address.port)};
  }
  auto gated = dial_through_gate(system, address.host, address.port, token, protocol_version,
                                 system.message_types<EmbeddingShardActor>());
  refused = gated.refused;
  if (gated.published) return caf::actor_cast<caf::actor_addr>(*gated.published);
  return Error{gated.published.error()};
}

}  // namespace

Status dial_table_shards(caf::actor_system& system, const std::vector<TableShardAddress>& shards,
                         const std::string& token, bool tls, const std::function<void(const std::string&)>& on_retry) {
  for (const auto& address : shards) {
    const auto where = fmt::format("table shard {} at {}:{}", address.index, address.host, address.port);
    // A shard that just opened its port on a busy machine may answer late: a few tries with backoff.
    constexpr int attempts = 5;
    auto delay = std::chrono::milliseconds(100);
    Result<caf::actor_addr> reached = Error{"not dialled"};
    bool refused = false;
    for (int attempt = 1; attempt <= attempts; ++attempt) {
      reached = dial_once(system, address, token, tls, refused);
      if (reached || refused || attempt == attempts) break;
      if (on_retry)
        on_retry(fmt::format("cannot reach {} yet ({}); retrying in {} ms (attempt {} of {})", where, reached.error(),
                             delay.count(), attempt, attempts));
      std::this_thread::sleep_for(delay);
      delay *= 2;
    }
    if (!reached)
      return Error{fmt::format("cannot reach {}: {}; give that shard `--listen HOST[:PORT]` at an address workers "
                               "can reach",
                               where, reached.error())};
    if (*reached != address.shard.address())
      return Error{fmt::format("{} is another process than the shard that joined the server", where)};
  }
  return success();
}

}  // namespace psgrad
