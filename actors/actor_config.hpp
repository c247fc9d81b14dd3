// The actor-system configuration shared by every psgrad process: message types registered in one
// place (a type unknown to one side of a connection is silently dropped by CAF 0.17), the middleman
// loaded, scheduler threads and network timeouts set.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "caf/actor_system.hpp"
#include "model/job.hpp"
#include "caf/actor_system_config.hpp"
#include "runtime/idle_help.hpp"
#include "runtime/step_helper.hpp"
#include "runtime/polling_scheduler.hpp"

namespace psgrad {

// TLS through CAF's OpenSSL module: this side's certificate and key, and the CA that peers'
// certificates must be signed by (which makes CAF require and verify the peer's certificate).
struct TlsSettings {
  std::string certificate;
  std::string key;
  std::string ca;
  bool enabled() const { return !certificate.empty() || !key.empty() || !ca.empty(); }
};

// The cluster section's defaults are the ones: a process without a config (work, shard) uses them.
struct NetworkSettings {
  std::chrono::milliseconds heartbeat_interval = ClusterSection{}.heartbeat;
  std::chrono::milliseconds connection_timeout = ClusterSection{}.connection_timeout;
  TlsSettings tls;
};

inline NetworkSettings network_settings(const ClusterSection& cluster) {
  return {cluster.heartbeat, cluster.connection_timeout,
          TlsSettings{cluster.tls_certificate, cluster.tls_key, cluster.tls_ca}};
}

class ActorConfig : public caf::actor_system_config {
 public:
  // threads 0: one per core.
  explicit ActorConfig(std::size_t threads = 0, NetworkSettings network = {});

  std::size_t threads() const { return threads_; }  // the scheduler's threads

  // An idle scheduler thread polls its queue for this long before it sleeps (runtime/polling_scheduler.hpp),
  // and meanwhile takes on the second half of a server step (idle_help()); zero (the default): it
  // sleeps at once, as in CAF's work sharing. Call it once (a second call throws std::logic_error),
  // before the actor system is made.
  void poll_when_idle(std::chrono::microseconds poll);

  // Server steps split in halves (idle_help()) without idle threads polling: for workers with threads
  // of their own, which take on the offered half while they wait (DataWorkerSetup::help).
  void split_server_steps();

  // Server steps split in halves, the second taken by a thread of its own (StepHelper) that a plain
  // sync server wakes as a step starts: for server and shard processes, whose scheduler threads do
  // not poll, and whose workers wait through each plain sync step. Nothing on one core, where that
  // thread would only take the core from the step, nor with one scheduler thread.
  void help_server_steps_from_a_thread();
  std::shared_ptr<StepHelper> step_helper() const { return step_helper_; }

  // Null unless idle threads poll or split_server_steps was called: then where a server step offers
  // half of its work.
  std::shared_ptr<IdleHelp> idle_help() const { return poll_settings_->help; }

 private:
  std::size_t threads_ = 0;
  // Shared with the scheduler's factory, which reads it when the actor system is made.
  std::shared_ptr<PollSettings> poll_settings_ = std::make_shared<PollSettings>();
  std::shared_ptr<StepHelper> step_helper_;
};

// The idle help of a system made from an ActorConfig that polls when idle or splits server steps; null
// otherwise.
std::shared_ptr<IdleHelp> idle_help_of(const caf::actor_system& system);

// The step helper of a system made from an ActorConfig that has one; null otherwise.
std::shared_ptr<StepHelper> step_helper_of(const caf::actor_system& system);

}  // namespace psgrad
