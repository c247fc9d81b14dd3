// Where a parameter server's handler runs when its message comes from another process.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/error_text.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "actor_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

// Holds one scheduler thread of `system` until `release` is set: the actor's handler does not return.
struct SchedulerBlocker {
  explicit SchedulerBlocker(caf::actor_system& system) {
    auto released = release.get_future().share();
    actor = system.spawn([this, released](caf::event_based_actor*) -> caf::behavior {
      return {[this, released](int) {
        entered = true;
        released.wait();
      }};
    });
    caf::anon_send(actor, 1);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!entered && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~SchedulerBlocker() { unblock(); }
  void unblock() {
    if (released_once) return;
    released_once = true;
    release.set_value();
  }

  std::promise<void> release;
  std::atomic<bool> entered{false};
  bool released_once = false;
  caf::actor actor;
};

}  // namespace

TEST_CASE("a parameter server answers a push from another process while every scheduler thread of its own is busy") {
  ActorConfig server_config(1);  // one scheduler thread, which the blocker below holds
  caf::actor_system server_system{server_config};
  ActorConfig worker_config(1);
  caf::actor_system worker_system{worker_config};

  const auto data = synthetic_data(64, 12, 4, 1);
  const auto job = small_job(TrainingMode::async, 1, 10);
  auto state = initial_server_state(job, data->width, data->num_classes);
  REQUIRE(state.ok());
  const auto layout = (*state)->layout;
  auto server = spawn_parameter_server(server_system, *state);
  const auto port = server_system.middleman().publish(server, 0, "127.0.0.1");
  REQUIRE(port);
  auto remote = worker_system.middleman().remote_actor<ParameterServerActor>("127.0.0.1", *port);
  REQUIRE(remote);

  SchedulerBlocker blocker(server_system);
  REQUIRE(blocker.entered);
  caf::scoped_actor self{worker_system};
  const std::vector<float> gradient(layout.total_size(), 0.01f);
  std::string outcome = "no answer";
  std::uint64_t version = 0;
  self->request(*remote, std::chrono::seconds(10), apply_atom::value,
                Gradients{0, layout.hash(), 0, 32, 0.5f, FloatBuffer::copy_of(gradient.data(), gradient.size())})
      .receive(
          [&](Weights& weights) {
            outcome = "answered";
            version = weights.version;
          },
          [&](caf::error& error) { outcome = error_text(worker_system, error); });
  // Answered by the network thread that read the push, while the scheduler thread was still held.
  CHECK(outcome == "answered");
  CHECK(version == 1);
  blocker.unblock();
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(blocker.actor, caf::exit_reason::user_shutdown);
}
