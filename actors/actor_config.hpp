// The actor-system configuration shared by every psgrad process: message types registered in one
// place (a type unknown to one side of a connection is silently dropped by CAF 0.17), the middleman
// loaded, scheduler threads and network timeouts set.
#pragma once

#include <chrono>
#include <cstddef>

#include "caf/actor_system_config.hpp"

namespace psgrad {

struct NetworkSettings {
  std::chrono::milliseconds heartbeat_interval{200};
  std::chrono::milliseconds connection_timeout{1000};
};

class ActorConfig : public caf::actor_system_config {
 public:
  // threads 0: one per core.
  explicit ActorConfig(std::size_t threads = 0, NetworkSettings network = {});
};

}  // namespace psgrad
