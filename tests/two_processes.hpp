// Two actor systems in one test standing for two processes, connected over loopback.
#pragma once

#include <doctest/doctest.h>

#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "actors/actor_config.hpp"

namespace psgrad::testing {

// A server's and a worker's process, one scheduler thread each.
struct Processes {
  ActorConfig server_config{1};
  caf::actor_system server{server_config};
  ActorConfig worker_config{1};
  caf::actor_system worker{worker_config};
};

// `actor`, published on loopback by `there`, as a process `here` reaches it (CAF's own publish: these
// tests are about messages between processes, not psgrad's connection gate).
template <class Handle>
Handle reach(caf::actor_system& there, const Handle& actor, caf::actor_system& here) {
  const auto port = there.middleman().publish(actor, 0, "127.0.0.1");
  REQUIRE(port);
  auto remote = here.middleman().remote_actor<Handle>("127.0.0.1", *port);
  REQUIRE(remote);
  return *remote;
}

}  // namespace psgrad::testing
