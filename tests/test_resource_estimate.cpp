// Tests for sizing a run from its config: the model's shape without allocating it, the memory
// estimate per kind of process, the one-line refusal and the bounds on thread-like counts.
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/machine_memory.hpp"
#include "io/model_shape.hpp"
#include "io/resource_estimate.hpp"
#include "model/model.hpp"

using namespace psgrad;

namespace {

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
const DataShape kMnistNpm{784, 10, 7996, 2004};

Config config_with(const std::vector<std::string>& overrides) {
  auto config = parse_config("", "test.toml", overrides);
  INFO("error: " << (config ? std::string() : config.error()));
  REQUIRE(config.ok());
  return *config;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("model_shape counts the parameters Model::build allocates, for every built-in architecture") {
  for (const auto& overrides : std::vector<std::vector<std::string>>{
           {}, {"model.hidden_width=300"}, {"model.@layers=mlp.v1", "model.widths=[64, 32, 16]"}}) {
    const auto config = config_with(overrides);
    auto shape = model_shape(config.model, 784, 10);
    REQUIRE(shape.ok());
    auto model = Model::build(config.model.architecture, config.model.settings, 784, 10);
    REQUIRE(model.ok());
    CHECK(shape->parameters == model->parameter_count());
    CHECK(shape->layout_hash == model->layout().hash());
    CHECK(shape->activation_floats_per_row > 0);
  }
}

TEST_CASE("model_shape sizes a trillion-parameter model without allocating it") {
  const auto config = config_with({"model.hidden_width=1048576"});
  auto shape = model_shape(config.model, 784, 10);
  REQUIRE(shape.ok());
  const std::uint64_t width = 1048576;
  CHECK(shape->parameters == width * 784 + width + width * width + width + 10 * width + 10);
}

TEST_CASE("the tutorial's run needs tens of MiB, and a bigger batch or model needs more") {
  auto tutorial = estimate_memory(config_with({}), kMnistNpm, ProcessRole::whole_run);
  REQUIRE(tutorial.ok());
  // Measured peak RSS of this run is about 50 MiB.
  CHECK(tutorial->total_bytes() > 30.0 * (1 << 20));
  CHECK(tutorial->total_bytes() < 200.0 * (1 << 20));
  auto bigger_batch = estimate_memory(config_with({"training.batch_size=4096"}), kMnistNpm, ProcessRole::whole_run);
  auto wider = estimate_memory(config_with({"model.hidden_width=1024"}), kMnistNpm, ProcessRole::whole_run);
  REQUIRE(bigger_batch.ok());
  REQUIRE(wider.ok());
  CHECK(bigger_batch->total_bytes() > tutorial->total_bytes());
  CHECK(wider->total_bytes() > tutorial->total_bytes());
}

TEST_CASE("each kind of process counts what it holds") {
  const auto config = config_with({"cluster.num_workers=8"});
  auto whole = estimate_memory(config, kMnistNpm, ProcessRole::whole_run);
  auto server = estimate_memory(config, kMnistNpm, ProcessRole::server);
  auto local_processes = estimate_memory(config, kMnistNpm, ProcessRole::server_and_worker_processes);
  auto worker = estimate_memory(config, kMnistNpm, ProcessRole::worker);
  auto shard = estimate_memory(config, kMnistNpm, ProcessRole::shard);
  for (const auto* estimate : {&whole, &server, &local_processes, &worker, &shard}) REQUIRE(estimate->ok());
  CHECK(server->total_bytes() < whole->total_bytes());
  CHECK(worker->total_bytes() < whole->total_bytes());
  // Every worker process loads the data set again.
  CHECK(local_processes->total_bytes() > whole->total_bytes());
  CHECK(shard->total_bytes() < server->total_bytes());
}

TEST_CASE("check_memory refuses in one line with the estimate, the machine's memory and the main cause") {
  const auto machine = 24 * kGiB;
  CHECK(check_memory(config_with({}), kMnistNpm, ProcessRole::whole_run, machine).ok());

  auto batch = check_memory(config_with({"training.batch_size=1000000000"}), kMnistNpm, ProcessRole::whole_run,
                            machine);
  REQUIRE_FALSE(batch.ok());
  INFO(batch.error());
  CHECK(batch.error().rfind("test.toml: needs ", 0) == 0);
  CHECK(contains(batch.error(), " TiB; this machine has 24 GiB; "));
  CHECK(contains(batch.error(), "training.batch_size 1000000000"));
  CHECK(batch.error().find('\n') == std::string::npos);

  auto width = check_memory(config_with({"model.hidden_width=1048576"}), kMnistNpm, ProcessRole::server, machine);
  REQUIRE_FALSE(width.ok());
  CHECK(contains(width.error(), "parameters"));

  // The same config fits a machine that is big enough.
  CHECK(check_memory(config_with({"training.batch_size=100000"}), kMnistNpm, ProcessRole::whole_run,
                     std::uint64_t{1} << 50)
            .ok());
  CHECK_FALSE(check_memory(config_with({"training.batch_size=100000"}), kMnistNpm, ProcessRole::whole_run, kGiB)
                  .ok());
}

TEST_CASE("thread-like counts have upper bounds in the config") {
  for (const auto& [key, limit] : std::vector<std::pair<std::string, std::int64_t>>{
           {"cluster.threads", max_scheduler_threads}, {"cluster.num_workers", max_workers}}) {
    CHECK(parse_config("", "test.toml", {key + "=" + std::to_string(limit)}).ok());
    auto over = parse_config("", "test.toml", {key + "=1000000"});
    REQUIRE_FALSE(over.ok());
    CHECK(contains(over.error(), key + ": expected an integer in ["));
  }
}

TEST_CASE("memory sizes read as people write them") {
  CHECK(memory_size_text(512) == "512 B");
  CHECK(memory_size_text(1536) == "1.5 KiB");
  CHECK(memory_size_text(24.0 * kGiB) == "24 GiB");
  CHECK(memory_size_text(2.9 * 1024 * kGiB) == "2.9 TiB");
  CHECK(memory_size_text(9.97 * kGiB) == "10 GiB");
  CHECK(machine_memory_bytes().value_or(0) > 0);
}
