// The scheduler whose idle threads poll before they sleep: nothing lost at the poll's edge, no spinning
// once idle, half a step taken on while polling, and used by local runs only where workers compute on
// the scheduler's threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "runtime/idle_help.hpp"
#include "tests/ci_skip.hpp"
#include "actors/local_training.hpp"
#include "tests/actor_fixtures.hpp"

using namespace psgrad;
using namespace std::chrono_literals;

namespace {

constexpr std::chrono::microseconds kPoll{200};

std::chrono::nanoseconds process_cpu_time() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return std::chrono::seconds(now.tv_sec) + std::chrono::nanoseconds(now.tv_nsec);
}

caf::behavior echo(caf::event_based_actor*) {
  return {[](int value) { return value; }};
}

}  // namespace

TEST_CASE("a polling scheduler answers every message, also those sent just as its threads stop polling") {
  ActorConfig config(2);
  config.poll_when_idle(kPoll);
  caf::actor_system system{config};
  auto first = system.spawn(echo);
  auto second = system.spawn(echo);
  caf::scoped_actor self{system};
  // Gaps around the poll's length put many messages at the moment a thread goes from polling to
  // sleeping: one lost there would never be answered.
  std::mt19937 random(7);
  std::uniform_int_distribution<int> gap_us(0, 2 * static_cast<int>(kPoll.count()));
  int answered = 0;
  for (int i = 0; i < 1500; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(gap_us(random)));
    self->request(i % 2 == 0 ? first : second, std::chrono::seconds(5), i)
        .receive([&](int value) { answered += value == i ? 1 : 0; }, [](caf::error&) {});
  }
  CHECK(answered == 1500);
}

TEST_CASE("idle threads of a polling scheduler sleep once their poll is over") {
  ActorConfig config(2);
  config.poll_when_idle(kPoll);
  caf::actor_system system{config};
  auto actor = system.spawn(echo);
  caf::scoped_actor self{system};
  for (int i = 0; i < 100; ++i) self->request(actor, std::chrono::seconds(5), i).receive([](int) {}, [](caf::error&) {});
  const auto cpu_before = process_cpu_time();
  std::this_thread::sleep_for(300ms);
  const auto used = process_cpu_time() - cpu_before;
  MESSAGE("CPU used by the idle process over 300 ms: " << std::chrono::duration<double, std::milli>(used).count()
                                                        << " ms");
  // Two threads that kept polling would use about 600 ms here; ones that sleep, next to nothing.
  CHECK(used < 60ms);
}

TEST_CASE("a local run polls only when its workers compute on the scheduler's threads, one per core at most") {
  CHECK(local_idle_poll(1, 2, 2).count() == 0);  // a thread of its own: the scheduler runs only the server
  CHECK(local_idle_poll(2, 2, 2).count() > 0);
  CHECK(local_idle_poll(4, 2, 2).count() > 0);
  CHECK(local_idle_poll(1, 1, 2).count() > 0);
  CHECK(local_idle_poll(8, 8, 2).count() == 0);  // more threads than cores: a poller would pre-empt a worker
}

TEST_CASE("idle help runs both halves on the caller, once each, when no thread polls") {
  IdleHelp help;
  std::vector<std::thread::id> ran;
  help.run([&](int part) { ran.push_back(part == 0 ? std::this_thread::get_id() : std::thread::id{}); });
  REQUIRE(ran.size() == 2);
  CHECK(ran[0] == std::this_thread::get_id());
  CHECK_FALSE(help.help());  // nothing left on offer
}

TEST_CASE("a polling scheduler thread takes on the half of a step that a busy thread offers") {
  ActorConfig config(2);
  config.poll_when_idle(kPoll);
  caf::actor_system system{config};
  const auto help = idle_help_of(system);
  REQUIRE(help != nullptr);
  auto actor = system.spawn(echo);
  // On a loaded machine a scheduler thread may be slow to get a core: try until one once takes it.
  int tries = 0;
  bool taken_elsewhere = false;
  while (!taken_elsewhere && tries < 100) {
    ++tries;
    // A message makes a scheduler thread run `actor`, and then poll for work, while this thread offers
    // the half and waits for it (up to 20 ms) without needing a wake-up of its own.
    caf::anon_send(actor, tries);
    std::atomic<int> halves{0};
    std::atomic<bool> second_elsewhere{false};
    const auto caller = std::this_thread::get_id();
    help->run([&](int part) {
      ++halves;
      if (part == 1) second_elsewhere = std::this_thread::get_id() != caller;
      const auto until = std::chrono::steady_clock::now() + 20ms;
      while (part == 0 && !second_elsewhere && std::chrono::steady_clock::now() < until) {
      }
    });
    REQUIRE(halves == 2);
    taken_elsewhere = second_elsewhere;
  }
  MESSAGE("a polling thread took the second half at try " << tries);
  CHECK(taken_elsewhere);
}

TEST_CASE("a worker with a thread of its own takes on halves of its server's steps, and the weights come out the same") {
  TrainingJob job;
  job.cluster.num_workers = 1;  // on 2 scheduler threads: a thread of its own
  job.training.iterations = 200;
  job.evaluation.frequency = 1000000;
  const auto data = testing::synthetic_data(512, 784, 10, 5);
  REQUIRE(workers_detached(job.cluster.num_workers, 2));
  if (std::thread::hardware_concurrency() < 2 &&
      testing::cannot_run_here("one core, where a waiting worker would spin on the server's core"))
    return;
  // A worker takes a half only while it spins on a core of its own as the server steps on the other:
  // with a core taken by another process, the server's thread preempts the spinning worker and steps
  // alone. CTest runs this case by itself (tests/serial_tests.cmake); a run still may find a core busy,
  // so up to three runs are made.
  std::uint64_t helped = 0;
  Weights helped_weights;
  for (int run = 1; run <= 3 && helped == 0; ++run) {
    ActorConfig config(2);
    prepare_local_run(config, job.cluster.num_workers);
    caf::actor_system system{config};
    const auto help = idle_help_of(system);
    REQUIRE(help != nullptr);
    auto summary = train_in_process(system, job, data, data, nullptr);
    REQUIRE(summary.ok());
    helped = help->halves_helped();
    helped_weights = summary.value().final_weights;
    MESSAGE("run " << run << ": the worker took " << helped << " halves of 200 steps' passes");
  }
  CHECK(helped > 0);
  ActorConfig alone(2);  // steps are not split
  caf::actor_system system{alone};
  REQUIRE(idle_help_of(system) == nullptr);
  auto summary = train_in_process(system, job, data, data, nullptr);
  REQUIRE(summary.ok());
  const auto& weights = summary.value().final_weights.values;
  REQUIRE(weights.size() == helped_weights.values.size());
  CHECK(std::equal(weights.data(), weights.data() + weights.size(), helped_weights.values.data()));
}

TEST_CASE("asking twice for idle threads that poll is refused, not a second scheduler") {
  ActorConfig config(2);
  config.poll_when_idle(kPoll);
  CHECK_THROWS_AS(config.poll_when_idle(kPoll), std::logic_error);
  // Still one scheduler: the system starts and answers.
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  int answer = 0;
  self->request(system.spawn(echo), std::chrono::seconds(5), 41).receive([&](int value) { answer = value; },
                                                                         [](caf::error&) {});
  CHECK(answer == 41);
}
