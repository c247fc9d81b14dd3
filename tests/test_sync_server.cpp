// The sync ParameterServer's barrier: whose pushes a step takes, and what it does with the others.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "runtime/error_text.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "tests/actor_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

// A server of a small model for `mode`, and its layout.
std::pair<ParameterServerActor, ParameterLayout> small_server(caf::actor_system& system, TrainingMode mode) {
  const auto data = synthetic_data(64, 12, 4, 1);
  auto state = initial_server_state(small_job(mode, 1, 10), data->width, data->num_classes);
  REQUIRE(state.ok());
  const auto layout = (*state)->layout;
  return {spawn_parameter_server(system, *state), layout};
}

}  // namespace

TEST_CASE("a sync server drops a push from a worker it was never told of, whatever its index, and steps with the members") {
  ActorConfig config(1);
  caf::actor_system system{config};
  const auto made = small_server(system, TrainingMode::sync);
  const auto& server = made.first;
  const auto& layout = made.second;
  caf::scoped_actor self{system};
  self->request(server, std::chrono::seconds(10), barrier_atom::value, std::vector<std::uint32_t>{0}, std::uint32_t{1})
      .receive([](std::vector<std::uint32_t>& waiting) { CHECK(waiting.empty()); },
               [&](caf::error& error) { FAIL(error_text(system, error)); });
  const std::vector<float> gradient(layout.total_size(), 0.01f);
  auto push = [&](std::uint32_t worker) {
    std::uint64_t version = UINT64_MAX;
    self->request(server, std::chrono::seconds(10), apply_atom::value,
                  Gradients{0, layout.hash(), worker, 32, 0.5f, FloatBuffer::copy_of(gradient.data(), gradient.size())})
        .receive([&](Weights& weights) { version = weights.version; },
                 [&](caf::error& error) { FAIL(error_text(system, error)); });
    return version;
  };
  // An index from the wire far past any member: answered at once with the weights it came from.
  CHECK(push(0x7fffffffu) == 0);
  CHECK(push(1) == 0);
  CHECK(push(0) == 1);  // the member's push makes the step
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
}

TEST_CASE("an async server refuses the sync barrier, naming what it is") {
  ActorConfig config(1);
  caf::actor_system system{config};
  const auto server = small_server(system, TrainingMode::async).first;
  caf::scoped_actor self{system};
  self->request(server, std::chrono::seconds(10), barrier_atom::value, std::vector<std::uint32_t>{0}, std::uint32_t{1})
      .receive([](std::vector<std::uint32_t>&) { FAIL("an async server took a barrier"); },
               [&](caf::error& error) { CHECK(error_text(system, error).find("async") != std::string::npos); });
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
}
