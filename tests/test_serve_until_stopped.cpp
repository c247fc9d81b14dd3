// How a worker or shard process reads the end of its run: its own actor's end against the server's.
#include <doctest/doctest.h>

#include <chrono>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "transport/remote_client.hpp"

using namespace psgrad;

namespace {

// An actor that quits (with `reason`) on its first message.
caf::actor spawn_quitter(caf::actor_system& system) {
  return system.spawn([](caf::event_based_actor* self) -> caf::behavior {
    return {[self](caf::exit_reason reason) { self->quit(reason); }};
  });
}

// Ends `actor` with `reason` and waits until it is down.
void end_and_wait(caf::scoped_actor& self, const caf::actor& actor, caf::exit_reason reason) {
  self->monitor(actor);
  self->send(actor, reason);
  self->receive([](const caf::down_msg&) {});
}

}  // namespace

TEST_CASE("a worker that quit on its stop has finished, even when the server's end is seen first") {
  ActorConfig config(1);
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  auto server = spawn_quitter(system);
  auto worker = spawn_quitter(system);
  // Both are gone before the wait begins: their down messages come in the order they are watched,
  // the server's first.
  end_and_wait(self, worker, caf::exit_reason::normal);
  end_and_wait(self, server, caf::exit_reason::normal);
  const auto ending = serve_until_stopped(self, caf::actor_cast<CoordinatorActor>(server), worker.address());
  REQUIRE(ending.ok());
  CHECK(ending->outcome == RunEnding::Outcome::finished);
}

TEST_CASE("a worker still running when the server goes away has lost its server") {
  ActorConfig config(1);
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  auto server = spawn_quitter(system);
  auto worker = spawn_quitter(system);
  end_and_wait(self, server, caf::exit_reason::normal);
  const auto ending = serve_until_stopped(self, caf::actor_cast<CoordinatorActor>(server), worker.address());
  REQUIRE_FALSE(ending.ok());
  CHECK(ending.error().find("lost the connection to the server") != std::string::npos);
}
