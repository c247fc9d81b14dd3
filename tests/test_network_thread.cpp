// Where a parameter server's and a worker's handlers run when their message comes from another process.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

#include "caf/all.hpp"
#include "caf/io/all.hpp"
#include "actors/actor_config.hpp"
#include "runtime/error_text.hpp"
#include "actors/local_training.hpp"
#include "actors/data_worker.hpp"
#include "actors/parameter_server.hpp"
#include "actors/training_job.hpp"
#include "tests/actor_fixtures.hpp"
#include "tests/stub_server.hpp"
#include "tests/two_processes.hpp"

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

// Refuses every push, so a worker's loop ends at its first gradient.
ParameterServerActor::behavior_type refusing_server() {
  const auto refuse = [] { return caf::make_error(caf::sec::runtime_error, "refused on purpose"); };
  return stub_server([=](apply_atom, Gradients&) -> caf::result<Weights> { return refuse(); });
}

}  // namespace

TEST_CASE("a parameter server answers a push from another process while every scheduler thread of its own is busy") {
  Processes processes;
  auto& server_system = processes.server;  // its scheduler thread is held below
  auto& worker_system = processes.worker;

  const auto data = synthetic_data(64, 12, 4, 1);
  const auto job = small_job(TrainingMode::async, 1, 10);
  auto state = initial_server_state(job, data->width, data->num_classes);
  REQUIRE(state.ok());
  const auto layout = (*state)->layout;
  auto server = spawn_parameter_server(server_system, *state);
  const auto remote = reach(server_system, server, worker_system);

  SchedulerBlocker blocker(server_system);
  REQUIRE(blocker.entered);
  caf::scoped_actor self{worker_system};
  const std::vector<float> gradient(layout.total_size(), 0.01f);
  std::string outcome = "no answer";
  std::uint64_t version = 0;
  self->request(remote, std::chrono::seconds(10), apply_atom::value,
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

TEST_CASE("a worker in a process of its own answers the network while its scheduler thread is busy, once its gradients are quick") {
  Processes processes;
  auto& worker_system = processes.worker;  // its scheduler thread is held below
  auto& server_system = processes.server;

  const auto data = synthetic_data(64, 12, 4, 1);
  auto job = small_job(TrainingMode::async, 1, 10);
  job.cluster.request_timeout = std::chrono::milliseconds(200);  // its watch ticks every 50 ms
  auto worker = spawn_data_worker(worker_system, DataWorkerSetup{job, 0, data, {}, std::nullopt, /*detached=*/false});
  REQUIRE(worker.ok());
  const auto remote = reach(worker_system, worker->actor, server_system);
  auto model = build_initialized_model(job, data->width, data->num_classes).value();
  const Weights weights{0, model.layout().hash(), FloatBuffer::copy_of(model.weights().data(), model.parameter_count())};
  auto server = server_system.spawn(refusing_server);

  // One gradient (a few microseconds), refused: the loop ends, and the worker's last watch tick is
  // given time to pass, so that nothing of its own process moves it onto the scheduler thread later.
  caf::scoped_actor self{server_system};
  std::string outcome = "no answer";
  self->request(remote, std::chrono::seconds(10), train_atom::value, weights, std::vector<ParameterServerActor>{server},
                std::uint64_t{5})
      .receive([&](bool) { outcome = "the loop ended without an error"; },
               [&](caf::error& error) { outcome = error_text(server_system, error); });
  CHECK(outcome.find("refused on purpose") != std::string::npos);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));

  SchedulerBlocker blocker(worker_system);
  REQUIRE(blocker.entered);
  std::int64_t clock = 0;
  std::string asked = "no answer";
  self->request(remote, std::chrono::seconds(5), clock_atom::value)
      .receive(
          [&](std::int64_t now) {
            asked = "answered";
            clock = now;
          },
          [&](caf::error& error) { asked = error_text(server_system, error); });
  // Answered by the worker process's network thread, while its scheduler thread was still held.
  CHECK(asked == "answered");
  CHECK(clock > 0);
  blocker.unblock();
  caf::anon_send_exit(worker->actor, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(blocker.actor, caf::exit_reason::user_shutdown);
}
