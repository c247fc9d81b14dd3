// A shard process's own port: workers dial it, so a shard's gradients and weights travel between the
// worker and the shard alone instead of through the server's process.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "caf/actor_system.hpp"
#include "transport/connection_gate.hpp"
#include "actors/interfaces.hpp"
#include "model/result.hpp"

namespace psgrad {

struct ShardListenSetup {
  std::string host;        // where to listen
  std::string advertised;  // what workers are told to dial; empty: `host`
  std::uint16_t port = 0;  // 0: the system picks a free one
  std::string token;       // the run's join token: the same gate as the server's
  bool tls = false;        // publish through CAF's OpenSSL module (loaded by the actor system)
  std::function<void(const std::string&)> on_event;
};

class ShardListener {
 public:
  // Listens for workers with `server` as the published actor; a failure in plain words.
  static Result<ShardListener> open(caf::actor_system& system, const ParameterServerActor& server,
                                    ShardListenSetup setup);

  const std::string& host() const { return host_; }
  std::uint16_t port() const { return port_; }
  // How many workers the gate admitted; unknown over TLS (CAF's OpenSSL module does not say).
  bool counts_known() const { return gate_ != nullptr; }
  std::uint64_t admitted() const { return gate_ ? gate_->counts().admitted : 0; }

 private:
  std::string host_;
  std::uint16_t port_ = 0;
  std::unique_ptr<ConnectionGate> gate_;  // plain mode; a TLS port closes with the actor system
};

// The local address this machine uses to reach host:port (the source address of that route): what a
// peer on the same network dials to reach us. An error names the host when no route exists.
Result<std::string> local_address_toward(const std::string& host, std::uint16_t port);

// Dials every shard process the coordinator names, through its gate (or TLS), once all have joined,
// so that this process reaches them directly. Returns one line per shard for the log, and the shards;
// a shard that cannot be dialled after a few tries (each told to on_retry) is an error naming its address.
struct DialledShards {
  std::vector<std::string> lines;
  std::vector<ShardAddress> shards;  // in shard order
};
Result<DialledShards> dial_shards(caf::actor_system& system, const CoordinatorActor& coordinator,
                                  const std::string& token, bool tls,
                                  const std::function<void(const std::string&)>& on_retry = {});

}  // namespace psgrad
