// The joining end of training across processes: a worker or shard process connects to a server,
// joins, and serves until the server stops it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "caf/scoped_actor.hpp"
#include "actors/interfaces.hpp"
#include "model/result.hpp"
#include "runtime/server_wait.hpp"

namespace psgrad {

struct ServerConnection {
  CoordinatorActor coordinator;
  JoinOffer offer;
};

struct RetryPolicy {
  bool tls = false;  // connect through CAF's OpenSSL module
  int attempts = 8;  // about 9 s in all with the delays below
  std::chrono::milliseconds first_delay{100};
  std::chrono::milliseconds max_delay{2000};
};

// Connects (retrying with backoff) and says hello as self_name (e.g. the host name); the offer carries
// the run's config and our index. `self` must live as long as the worker serves: the server watches it to free the worker's place
// when the process goes away before joining.
Result<ServerConnection> connect_to_server(caf::scoped_actor& self, const std::string& host,
                                           std::uint16_t port, const std::string& token,
                                           const std::string& self_name, const RetryPolicy& retry,
                                           const std::function<void(const std::string&)>& on_retry);

Result<std::uint32_t> join_server(caf::scoped_actor& self, const CoordinatorActor& coordinator,
                                  const JoinRequest& request);

// A shard process's hello: the run's config (in the offer) for shard `shard`.
Result<ServerConnection> connect_as_shard(caf::scoped_actor& self, const std::string& host, std::uint16_t port,
                                          const std::string& token, std::uint32_t shard, const RetryPolicy& retry,
                                          const std::function<void(const std::string&)>& on_retry);
// A table shard process's hello (a sparse run): the run's config (in the offer) for table shard `index`.
Result<ServerConnection> connect_as_table_shard(caf::scoped_actor& self, const std::string& host, std::uint16_t port,
                                                const std::string& token, std::uint32_t index,
                                                const RetryPolicy& retry,
                                                const std::function<void(const std::string&)>& on_retry);
// `host`:`port` is where the shard listens for workers (transport/shard_listener.hpp); `host_identity`
// lets workers on its host use shared memory (empty: they never do).
Status join_as_shard(caf::scoped_actor& self, const CoordinatorActor& coordinator, std::uint32_t shard,
                     const ParameterServerActor& server, std::uint64_t layout_hash, const std::string& host,
                     std::uint16_t port, const std::string& host_identity);

// How a run ended for the worker or shard a process serves: it finished, the server ended it because
// the run failed, or the server answered nothing for longer than the process waits (`failure` says
// why: in the server's words, or in one line naming the server and the limit).
struct RunEnding {
  // dropped: the server went on without this worker, whose payload arrived refused (failure says why).
  enum class Outcome { finished, failed_on_server, server_silent, dropped };
  Outcome outcome = Outcome::finished;
  std::string failure;
};

// How long a worker process waits for a server that answers nothing (runtime/server_wait.hpp).
struct ServerWaitSetup {
  std::chrono::milliseconds limit{0};      // cluster.server_wait_ms; 0: forever
  std::string server;                      // HOST:PORT, as the line that gives up names it
  std::shared_ptr<ServerSilence> silence;  // told whether the server is silent now; may be null
};

// Blocks until `served` (our worker or shard) is stopped, or ended by the server with a failure as its
// exit reason (both a RunEnding), or the server goes away (error). With `linger` > 0, a stopped `served`
// then waits up to that long for the server to go away: the server waits for the answer to its stop,
// and this process must not end before that answer has left. With `wait`, it asks the server every
// so often meanwhile, and stops `served` once the server has answered nothing for longer than the limit.
Result<RunEnding> serve_until_stopped(caf::scoped_actor& self, const CoordinatorActor& coordinator,
                                      const caf::actor_addr& served,
                                      std::chrono::milliseconds linger = std::chrono::milliseconds(0),
                                      const std::optional<ServerWaitSetup>& wait = std::nullopt);

}  // namespace psgrad
