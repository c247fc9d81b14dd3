// `psgrad config check` accepts only what a run can start with: the command run as a user would.
#include <doctest/doctest.h>

#include <string>

#include "tests/psgrad_binary.hpp"

using namespace psgrad::testing;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("config check refuses more shards than the model has arrays") {
  const auto config = config_path("mnist.toml");
  const auto refused = run_psgrad("config check " + config + " --set cluster.servers=24");
  INFO(refused.output);
  CHECK(refused.exit_code == 2);
  CHECK(line_count(refused.output) == 1);
  CHECK(contains(refused.output, "cluster.servers"));
  CHECK(contains(refused.output, "into 24 server shards"));
  // What the check accepts, a run starts with.
  const auto accepted = run_psgrad("config check " + config + " --set cluster.servers=8");
  INFO(accepted.output);
  CHECK(accepted.exit_code == 0);
}

TEST_CASE("config check and train accept the README's warm-up schedule, and refuse constant.v1 at rate 0 naming it") {
  const std::string warmup = " --set optimizer.learn_rate.@schedules=warmup_linear.v1 --set "
                             "optimizer.learn_rate.initial_rate=0.002 --set optimizer.learn_rate.warmup_steps=20 "
                             "--set optimizer.learn_rate.total_steps=200";
  const auto config = config_path("mnist.toml");
  CHECK(run_psgrad("config check " + config + warmup).exit_code == 0);
  const auto trained = run_psgrad("train --config " + config + warmup +
                                  " --set training.iterations=3 --workers 1 --metrics '' --quiet");
  INFO(trained.output);
  CHECK(trained.exit_code == 0);
  CHECK(contains(trained.output, "Final"));
  const auto refused = run_psgrad("config check " + config +
                                  " --set optimizer.learn_rate.@schedules=constant.v1 --set optimizer.learn_rate.rate=0");
  INFO(refused.output);
  CHECK(refused.exit_code == 2);
  CHECK(contains(refused.output, "constant.v1"));
}

TEST_CASE("an async run whose iterations x workers would overflow is refused, not run as 0 steps") {
  const auto refused = run_psgrad("train --config " + config_path("mnist.toml") +
                                  " --mode async --workers 4 --set training.iterations=4611686018427387904 --metrics ''");
  INFO(refused.output);
  CHECK(refused.exit_code == 2);
  CHECK(line_count(refused.output) == 1);
  CHECK(contains(refused.output, "training.iterations"));
}
