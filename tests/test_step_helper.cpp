// The thread of a server process that takes on half of each plain sync step: it takes halves only
// once woken, a plain sync server wakes it as each step starts (a pipelined one never), and the
// weights come out as from one thread.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "runtime/idle_help.hpp"
#include "tests/ci_skip.hpp"
#include "actors/local_training.hpp"
#include "runtime/step_helper.hpp"
#include "tests/actor_fixtures.hpp"

using namespace psgrad;
using namespace std::chrono_literals;

namespace {

// Runs `help` on this thread with part 0 waiting (up to 5 s) for part 1 to run elsewhere. True when
// part 1 ran on another thread.
bool second_half_ran_elsewhere(IdleHelp& help) {
  std::atomic<bool> elsewhere{false};
  const auto caller = std::this_thread::get_id();
  help.run([&](int part) {
    if (part == 1) {
      elsewhere = std::this_thread::get_id() != caller;
      return;
    }
    const auto until = std::chrono::steady_clock::now() + 5s;
    while (!elsewhere && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  });
  return elsewhere;
}

// On one core a process makes no step helper: the cases that need one say so and pass (fail under CI).
bool one_core() {
  if (std::thread::hardware_concurrency() >= 2) return false;
  return testing::cannot_run_here("one core, where a process makes no step helper");
}

// 2 workers in sync, evaluation only at the end.
TrainingJob sync_job(std::uint64_t iterations, bool pipeline) {
  TrainingJob job;
  job.cluster.num_workers = 2;
  job.training.iterations = iterations;
  job.evaluation.frequency = 1000000;
  job.cluster.pipeline = pipeline;
  return job;
}

// A sync run of 2 workers on 2 scheduler threads, in a system whose config may have a step helper.
struct HelpedRun {
  Weights weights;
  std::uint64_t halves = 0;
};

HelpedRun sync_run(const TrainingJob& job, const std::shared_ptr<const Dataset>& data, bool with_helper) {
  ActorConfig config(2);
  if (with_helper) config.help_server_steps_from_a_thread();
  caf::actor_system system{config};
  auto summary = train_in_process(system, job, data, data, nullptr);
  REQUIRE(summary.ok());
  const auto help = idle_help_of(system);
  return HelpedRun{summary.value().final_weights, help ? help->halves_helped() : 0};
}

bool same_floats(const Weights& a, const Weights& b) {
  return a.values.size() == b.values.size() &&
         std::equal(a.values.data(), a.values.data() + a.values.size(), b.values.data());
}

}  // namespace

TEST_CASE("a step helper woken as a step starts takes on the half the step offers") {
  auto help = std::make_shared<IdleHelp>();
  StepHelper helper(help, 5s, 5s);  // watches long enough for a loaded machine; its end cuts the watch short
  helper.wake();
  const auto until = std::chrono::steady_clock::now() + 5s;
  while (!helper.watching() && std::chrono::steady_clock::now() < until) std::this_thread::yield();
  REQUIRE(helper.watching());
  CHECK(second_half_ran_elsewhere(*help));
  CHECK(help->halves_helped() == 1);
}

TEST_CASE("a step helper that was not woken takes nothing") {
  auto help = std::make_shared<IdleHelp>();
  StepHelper helper(help, 5s, 5s);
  std::this_thread::sleep_for(20ms);  // time enough to take a half, if it watched
  std::thread::id ran[2];
  help->run([&](int part) { ran[part] = std::this_thread::get_id(); });
  CHECK(ran[0] == std::this_thread::get_id());
  CHECK(ran[1] == std::this_thread::get_id());
  CHECK(help->halves_helped() == 0);
  CHECK_FALSE(helper.watching());
}

TEST_CASE("a plain sync server wakes its process's step helper, and the weights come out as from one thread") {
  if (one_core()) return;
  const auto job = sync_job(200, false);
  const auto data = testing::synthetic_data(512, 784, 10, 5);
  // The helper takes a half only when it gets a core while the step runs; CTest runs this case by
  // itself (tests/serial_tests.cmake), and a run may still find a core busy: up to three runs.
  HelpedRun helped;
  for (int run = 1; run <= 3 && helped.halves == 0; ++run) {
    helped = sync_run(job, data, true);
    MESSAGE("run " << run << ": the step helper took " << helped.halves << " halves of 200 steps' passes");
  }
  CHECK(helped.halves > 0);
  const auto alone = sync_run(job, data, false);
  CHECK(alone.halves == 0);
  CHECK(same_floats(helped.weights, alone.weights));
}

TEST_CASE("a pipelined sync server leaves its process's step helper asleep") {
  if (one_core()) return;
  const auto job = sync_job(100, true);
  const auto data = testing::synthetic_data(512, 784, 10, 5);
  const auto helped = sync_run(job, data, true);
  CHECK(helped.halves == 0);
  const auto alone = sync_run(job, data, false);
  CHECK(same_floats(helped.weights, alone.weights));
}

TEST_CASE("a process held to one scheduler thread makes no step helper") {
  ActorConfig config(1);
  config.help_server_steps_from_a_thread();
  CHECK(config.step_helper() == nullptr);
  CHECK(config.idle_help() == nullptr);
}
