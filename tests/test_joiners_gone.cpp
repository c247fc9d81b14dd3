// A served run whose worker processes it started itself stops waiting for their joins once they have
// ended: how each ended is read without reaping it, and the server's wait ends with that line.
#include <doctest/doctest.h>

#include <csignal>
#include <string>
#include <vector>

#include <sys/wait.h>

#include "caf/actor_system.hpp"
#include "actors/actor_config.hpp"
#include "apps/child_process.hpp"
#include "apps/local_workers.hpp"
#include "tests/actor_fixtures.hpp"
#include "transport/remote_server.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

ChildProcess start_child(const std::string& script) {
  ChildSpec spec;
  spec.command = {"sh", "-c", script};
  spec.streams = ChildStreams::inherited;
  auto child = ChildProcess::start(spec);
  REQUIRE(child.ok());
  return std::move(child).value();
}

// Blocks until the child has ended, leaving it unreaped as has_exited() does.
void await_end(const ChildProcess& child) {
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(child.pid()), &info, WEXITED | WNOWAIT) != 0) {
  }
}

}  // namespace

TEST_CASE("the first started process that ended is named with how it ended, and none while all run") {
  std::vector<ChildProcess> processes;
  processes.push_back(start_child("exec sleep 30"));
  CHECK(contains(ended_before_joining(processes, 2), "only 1 of the 2 processes"));
  CHECK(ended_before_joining(processes, 1).empty());
  CHECK_FALSE(processes[0].how_it_ended().has_value());

  processes.push_back(start_child("exit 3"));
  await_end(processes[1]);
  const auto exited = ended_before_joining(processes, 2);
  CHECK(contains(exited, fmt::format("(pid {}) exited with code 3 before training began", processes[1].pid())));

  processes[0].signal(SIGKILL);
  await_end(processes[0]);
  CHECK(contains(ended_before_joining(processes, 2), fmt::format("(pid {}) was killed by SIGKILL", processes[0].pid())));
  // Still unreaped: wait() reaps them, and the end reads the same after.
  for (auto& process : processes) process.wait();
  CHECK(processes[0].how_it_ended() == "was killed by SIGKILL");
  CHECK(processes[1].how_it_ended() == "exited with code 3");
}

TEST_CASE("a server waiting for workers whose processes ended says so and returns, long before its join timeout") {
  ActorConfig config{2};
  caf::actor_system system{config};
  ServeSetup setup;
  setup.job = small_job(TrainingMode::sync, 2, 5);
  setup.dev = synthetic_data(64, 8, 3, 1);
  setup.join_timeout = std::chrono::hours(1);
  std::vector<ChildProcess> started;
  setup.on_listening = [&](std::uint16_t) { started.push_back(start_child("exit 1")); };
  setup.joiners_gone = [&started] { return ended_before_joining(started, 1); };
  const auto outcome = serve_training(system, setup);
  REQUIRE_FALSE(outcome.ok());
  CHECK(contains(outcome.error(), "exited with code 1 before training began"));
  for (auto& process : started) process.wait();
}
