// Sync with cluster.ordered_answers: a server answers a step's remote pushes one at a time.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "caf/all.hpp"
#include "transport/connection_gate.hpp"
#include "runtime/error_text.hpp"
#include "transport/gated_dial.hpp"
#include "actors/answer_pacer.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "actors/training_job.hpp"
#include "tests/actor_fixtures.hpp"
#include "tests/local_run.hpp"
#include "tests/two_processes.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

using Clock = std::chrono::steady_clock;

// Waits for the answer to a push; empty when an error came instead.
template <class Handle>
std::optional<Weights> answer(Handle& pushed, caf::actor_system& system) {
  std::optional<Weights> got;
  std::move(pushed).receive([&](Weights& weights) { got = std::move(weights); },
                            [&](caf::error& error) { FAIL("push refused: " << error_text(system, error)); });
  return got;
}

// A sync server with ordered answers whose steps sum the gradients of workers 0 and 1.
struct OrderedServer {
  ParameterServerActor server;
  ParameterLayout layout;
};

OrderedServer ordered_server(caf::actor_system& system) {
  const auto data = synthetic_data(64, 12, 4, 1);
  const auto job = small_job(TrainingMode::sync, 2, 10);
  auto state = initial_server_state(job, data->width, data->num_classes);
  REQUIRE(state.ok());
  (*state)->ordered_answers = true;
  const auto layout = (*state)->layout;
  auto server = spawn_parameter_server(system, *state);
  caf::scoped_actor driver{system};
  driver->request(server, std::chrono::seconds(10), barrier_atom::value, std::vector<std::uint32_t>{0, 1},
                  std::uint32_t{2})
      .receive([](std::vector<std::uint32_t>&) {}, [](caf::error&) { FAIL("barrier refused"); });
  return OrderedServer{server, layout};
}

}  // namespace

TEST_CASE("with ordered answers a sync server answers remote workers one at a time, the next once the one before has its weights") {
  Processes processes;
  const auto ordered = ordered_server(processes.server);
  const auto& server = ordered.server;
  const auto& layout = ordered.layout;
  const auto remote = reach(processes.server, server, processes.worker);
  caf::scoped_actor worker0{processes.worker};
  caf::scoped_actor worker1{processes.worker};
  const std::vector<float> gradient(layout.total_size(), 0.01f);
  auto push = [&](caf::scoped_actor& worker, std::uint32_t index, std::uint64_t version) {
    return worker->request(remote, std::chrono::seconds(10), apply_atom::value,
                           Gradients{version, layout.hash(), index, 32, 0.5f,
                                     FloatBuffer::copy_of(gradient.data(), gradient.size())});
  };

  // Step 1: worker 1's answer waits until worker 0 says it has its weights (sent 150 ms later).
  auto first0 = push(worker0, 0, 0);
  auto first1 = push(worker1, 1, 0);
  const auto weights0 = answer(first0, processes.worker);
  REQUIRE(weights0.has_value());
  CHECK(weights0->version == 1);
  const auto answered0 = Clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  worker0->send(remote, received_atom::value, std::uint32_t{0}, weights0->version);
  const auto weights1 = answer(first1, processes.worker);
  const auto waited = Clock::now() - answered0;
  REQUIRE(weights1.has_value());
  CHECK(weights1->version == 1);
  CHECK(weights1->values == weights0->values);
  CHECK(waited >= std::chrono::milliseconds(150));  // not before the receipt
  // Because of it, not after the wait for it ran out (850 ms of margin for a loaded machine).
  CHECK(waited < AnswerPacer::receipt_wait);

  // Step 2: without a receipt, the next answer goes once the wait for it (1 s) runs out.
  auto second0 = push(worker0, 0, 1);
  auto second1 = push(worker1, 1, 1);
  const auto step2_0 = answer(second0, processes.worker);
  REQUIRE(step2_0.has_value());
  const auto answered = Clock::now();
  const auto step2_1 = answer(second1, processes.worker);
  REQUIRE(step2_1.has_value());
  CHECK(step2_1->version == 2);
  CHECK(Clock::now() - answered >= std::chrono::milliseconds(800));
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
}

TEST_CASE("with ordered answers through psgrad's gate the next answer goes once the one before has left the server's sockets") {
  // Connections the gate admitted are watched (runtime/socket_backlog.hpp): on loopback an answer
  // leaves at once, so the next goes without waiting for a receipt, which this worker never sends.
  Processes processes;
  const auto ordered = ordered_server(processes.server);
  const auto& server = ordered.server;
  const auto& layout = ordered.layout;
  auto gate = ConnectionGate::open(processes.server,
                                   gate_publishing(processes.server, server, "127.0.0.1", 0, "token",
                                                   protocol_version, nullptr));
  REQUIRE(gate.ok());
  auto dial = dial_through_gate(processes.worker, "127.0.0.1", (*gate)->port(), "token", protocol_version,
                                processes.worker.message_types<ParameterServerActor>());
  REQUIRE(dial.published.ok());
  const auto remote = caf::actor_cast<ParameterServerActor>(std::move(*dial.published));
  caf::scoped_actor worker0{processes.worker};
  caf::scoped_actor worker1{processes.worker};
  const std::vector<float> gradient(layout.total_size(), 0.01f);
  auto push = [&](caf::scoped_actor& worker, std::uint32_t index, std::uint64_t version) {
    return worker->request(remote, std::chrono::seconds(10), apply_atom::value,
                           Gradients{version, layout.hash(), index, 32, 0.5f,
                                     FloatBuffer::copy_of(gradient.data(), gradient.size())});
  };
  // Paced by the socket, the second answer follows the first well before the 1 s a missing receipt is
  // waited for. A loaded machine may stall any one step, so the quickest of three steps counts.
  auto quickest = std::chrono::steady_clock::duration::max();
  for (std::uint64_t version = 0; version < 3; ++version) {
    auto pushed0 = push(worker0, 0, version);
    auto pushed1 = push(worker1, 1, version);
    const auto weights0 = answer(pushed0, processes.worker);
    REQUIRE(weights0.has_value());
    const auto answered0 = Clock::now();
    const auto weights1 = answer(pushed1, processes.worker);
    REQUIRE(weights1.has_value());
    CHECK(weights1->values == weights0->values);
    quickest = std::min(quickest, Clock::now() - answered0);
  }
  CHECK(quickest < AnswerPacer::receipt_wait / 2);
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
}

TEST_CASE("with ordered answers a sync server still answers workers in its own process at once") {
  const auto data = synthetic_data(64, 12, 4, 1);
  auto job = small_job(TrainingMode::sync, 3, 6);
  const auto unordered = train_locally(job, data, data, 2);
  job.cluster.ordered_answers = true;
  const auto started = Clock::now();
  const auto ordered = train_locally(job, data, data, 2);
  // Two answers a step held for a receipt that never comes would take 2 s a step.
  CHECK(Clock::now() - started < std::chrono::seconds(4));
  CHECK(ordered.steps == 6);
  CHECK(ordered.final_weights.values == unordered.final_weights.values);
}
