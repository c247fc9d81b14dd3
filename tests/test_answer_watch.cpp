// AnswerWatch and the worker's push timeout built on it: a server that owes an answer for too long
// ends the worker's loop with one line naming it, without a CAF timeout on every push.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/answer_watch.hpp"
#include "actors/data_worker.hpp"
#include "runtime/error_text.hpp"
#include "actors/training_job.hpp"
#include "tests/actor_fixtures.hpp"
#include "tests/stub_server.hpp"

using namespace psgrad;
using namespace psgrad::testing;
using std::chrono::nanoseconds;

TEST_CASE("a server that owes an answer turns silent only once the timeout has passed since it last spoke") {
  AnswerWatch watch(1);
  watch.asked(0, 1000);
  CHECK_FALSE(watch.silent(1000 + 500, nanoseconds(500)).has_value());
  CHECK(watch.silent(1000 + 501, nanoseconds(500)) == std::optional<std::size_t>(0));
  // A second request while one is owed does not restart the clock; an answer does.
  watch.asked(0, 1400);
  CHECK(watch.silent(1000 + 501, nanoseconds(500)) == std::optional<std::size_t>(0));
  watch.answered(0, 1450);
  CHECK_FALSE(watch.silent(1450 + 500, nanoseconds(500)).has_value());
  CHECK(watch.silent(1450 + 501, nanoseconds(500)) == std::optional<std::size_t>(0));
  // Nothing owed: never silent, however long it has been.
  watch.answered(0, 2000);
  CHECK_FALSE(watch.silent(1'000'000'000, nanoseconds(500)).has_value());
}

TEST_CASE("an answer owed while the server process was silent counts from when the silence was last seen") {
  AnswerWatch watch(2);
  watch.asked(0, 0);
  watch.asked(1, 0);
  watch.answered(1, 10);
  CHECK(watch.silent(600, nanoseconds(500)) == std::optional<std::size_t>(0));
  watch.restart(600);
  CHECK_FALSE(watch.silent(1100, nanoseconds(500)).has_value());
  CHECK(watch.silent(1101, nanoseconds(500)) == std::optional<std::size_t>(0));
  // A server that owes nothing is not given a clock to run.
  watch.answered(0, 1200);
  watch.restart(5000);
  CHECK_FALSE(watch.silent(1'000'000, nanoseconds(500)).has_value());
  watch.asked(1, 2'000'000);
  CHECK(watch.silent(2'000'501, nanoseconds(500)) == std::optional<std::size_t>(1));
}

TEST_CASE("the first shard that owes an answer too long is the one named") {
  AnswerWatch watch(3);
  for (std::size_t shard = 0; shard < 3; ++shard) watch.asked(shard, 0);
  watch.answered(0, 100);
  watch.answered(1, 100);
  CHECK(watch.silent(200, nanoseconds(150)) == std::optional<std::size_t>(2));
  watch.answered(2, 200);
  CHECK_FALSE(watch.silent(300, nanoseconds(150)).has_value());
}

namespace {

// A server that takes every push and never answers it (a frozen process with its socket open).
ParameterServerActor::behavior_type silent_server(ParameterServerActor::stateful_pointer<std::vector<caf::response_promise>> self) {
  return stub_server(
      [self](apply_atom, Gradients&) -> caf::result<Weights> {
        self->state.push_back(self->make_response_promise());
        return caf::delegated<Weights>();
      });
}

}  // namespace

TEST_CASE("a worker whose server never answers a push ends its loop naming the server after request_timeout") {
  for (auto mode : {TrainingMode::async, TrainingMode::sync}) {
    CAPTURE(mode_name(mode));
    ActorConfig config(2);
    caf::actor_system system{config};
    const auto data = synthetic_data(64, 12, 4, 1);
    auto job = small_job(mode, 1, 10);
    job.cluster.request_timeout = std::chrono::milliseconds(100);
    auto worker = spawn_data_worker(system, DataWorkerSetup{job, 0, data});
    REQUIRE(worker.ok());
    auto model = build_initialized_model(job, data->width, data->num_classes).value();
    const Weights weights{0, model.layout().hash(), FloatBuffer::copy_of(model.weights().data(), model.parameter_count())};
    auto server = system.spawn(silent_server);
    caf::scoped_actor self{system};
    self->send(worker->actor, until_atom::value, std::uint64_t{5});  // sync: it may compute up to version 5
    std::string outcome = "answered";
    const auto start = std::chrono::steady_clock::now();
    self->request(worker->actor, std::chrono::seconds(30), train_atom::value, weights,
                  std::vector<ParameterServerActor>{server}, std::uint64_t{5})
        .receive([&](bool) { outcome = "the loop ended without an error"; },
                 [&](caf::error& error) { outcome = error_text(system, error); });
    const auto waited = std::chrono::steady_clock::now() - start;
    const auto timeout = (mode == TrainingMode::sync ? 3 : 1) * job.cluster.request_timeout;
    CHECK(outcome == fmt::format("parameter server: no answer within {} ms", timeout.count()));
    CHECK(waited >= timeout);
    caf::anon_send_exit(worker->actor, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  }
}

TEST_CASE("a worker does not count time its server process is silent toward a push's answer timeout") {
  ActorConfig config(2);
  caf::actor_system system{config};
  const auto data = synthetic_data(64, 12, 4, 1);
  auto job = small_job(TrainingMode::async, 1, 10);
  job.cluster.request_timeout = std::chrono::milliseconds(100);
  DataWorkerSetup setup{job, 0, data};
  auto silence = std::make_shared<ServerSilence>();
  silence->set(true);
  setup.server_silence = silence;
  auto worker = spawn_data_worker(system, std::move(setup));
  REQUIRE(worker.ok());
  auto model = build_initialized_model(job, data->width, data->num_classes).value();
  const Weights weights{0, model.layout().hash(), FloatBuffer::copy_of(model.weights().data(), model.parameter_count())};
  auto server = system.spawn(silent_server);
  caf::scoped_actor self{system};
  std::string outcome = "still waiting";
  auto answer = self->request(worker->actor, std::chrono::seconds(60), train_atom::value, weights,
                              std::vector<ParameterServerActor>{server}, std::uint64_t{5});
  // Ten timeouts of silence: the process's wait for its server judges those, not the push's timeout.
  std::this_thread::sleep_for(10 * job.cluster.request_timeout);
  // The server speaks again but still owes the answer: the timeout runs from about the silence's end
  // (the worker looks every watch interval), so the answer cannot be waiting already.
  silence->set(false);
  const auto spoke = std::chrono::steady_clock::now();
  answer.receive([&](bool) { outcome = "the loop ended without an error"; },
                 [&](caf::error& error) { outcome = error_text(system, error); });
  CHECK(outcome == "parameter server: no answer within 100 ms");
  CHECK(std::chrono::steady_clock::now() - spoke >= job.cluster.request_timeout - watch_interval(job.cluster.request_timeout));
  caf::anon_send_exit(worker->actor, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
}
