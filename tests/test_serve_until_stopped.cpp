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

// A server and a worker that quit when told to, and the wait for the run's end between them.
struct ServerAndWorker {
  ActorConfig config{1};
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  caf::actor server = spawn_quitter(system);
  caf::actor worker = spawn_quitter(system);

  // Ends `actor` with `reason` and waits until it is down.
  void end(const caf::actor& actor, caf::exit_reason reason) {
    self->monitor(actor);
    self->send(actor, reason);
    self->receive([](const caf::down_msg&) {});
  }
  Result<RunEnding> wait() {
    return serve_until_stopped(self, caf::actor_cast<CoordinatorActor>(server), worker.address());
  }
};

}  // namespace

TEST_CASE("a worker that quit on its stop has finished, even when the server's end is seen first") {
  ServerAndWorker run;
  // Both are gone before the wait begins: their down messages come in the order they are watched,
  // the server's first.
  run.end(run.worker, caf::exit_reason::normal);
  run.end(run.server, caf::exit_reason::normal);
  const auto ending = run.wait();
  REQUIRE(ending.ok());
  CHECK(ending->outcome == RunEnding::Outcome::finished);
}

TEST_CASE("a worker still running when the server goes away has lost its server") {
  ServerAndWorker run;
  run.end(run.server, caf::exit_reason::normal);
  const auto ending = run.wait();
  REQUIRE_FALSE(ending.ok());
  CHECK(ending.error().find("lost the connection to the server") != std::string::npos);
}
