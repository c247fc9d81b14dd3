// training.with_averages: runs evaluate, keep and save the optimizer's weight averages, Thinc's way.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "io/config.hpp"
#include "model/run_features.hpp"
#include "tests/actor_fixtures.hpp"
#include "tests/psgrad_binary.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

TrainingSummary run(const TrainingJob& job, const std::shared_ptr<const Dataset>& data) {
  ActorConfig config(2);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  auto summary = train_in_process(system, job, data, data, nullptr);
  REQUIRE_MESSAGE(summary.ok(), (summary.ok() ? "" : summary.error()));
  return std::move(summary).value();
}

std::vector<float> values_of(const Weights& weights) {
  return std::vector<float>(weights.values.data(), weights.values.data() + weights.values.size());
}

// Thinc's Ops.update_averages after update t (optimizers.py: the average starts at zero and is updated
// with each step's new weights), written out here from Thinc's source rather than taken from psgrad.
void thinc_update_averages(std::vector<double>& average, const std::vector<float>& weights, int t) {
  const double decay = std::min((1.0 + t) / (10.0 + t), 0.9999);
  for (std::size_t i = 0; i < average.size(); ++i) average[i] -= (1.0 - decay) * (average[i] - weights[i]);
}

// The text after `label` up to the end of its line ("" when absent).
std::string after(const std::string& text, const std::string& label) {
  const auto at = text.find(label);
  if (at == std::string::npos) return "";
  const auto end = text.find('\n', at);
  return text.substr(at + label.size(), end == std::string::npos ? std::string::npos : end - at - label.size());
}

void check_close(const std::vector<float>& got, const std::vector<double>& expected) {
  REQUIRE(got.size() == expected.size());
  std::size_t off = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (std::abs(got[i] - expected[i]) > 1e-5 * std::max(1.0, std::abs(expected[i]))) ++off;
  CHECK(off == 0);
}

}  // namespace

TEST_CASE("with_averages, a sync run ends with Thinc's averages of the weights each of its steps made") {
  const auto data = synthetic_data(128, 12, 3, 5);
  auto job = small_job(TrainingMode::sync, 2, 1);
  constexpr int kSteps = 6;
  // The same seed and mode stopped after each step: the weights each step of the longer run made.
  std::vector<double> average;
  std::vector<float> last_weights;
  for (int t = 1; t <= kSteps; ++t) {
    job.training.iterations = static_cast<std::uint64_t>(t);
    const auto weights = values_of(run(job, data).final_weights);
    if (average.empty()) average.assign(weights.size(), 0.0);
    thinc_update_averages(average, weights, t);
    last_weights = weights;
  }
  job.training.with_averages = true;
  const auto averaged = run(job, data);
  CHECK(averaged.final_weights.version == kSteps);
  check_close(values_of(averaged.final_weights), average);
  // The averages are not the weights: the run saved something else than a plain run would.
  CHECK(values_of(averaged.final_weights) != last_weights);
}

TEST_CASE("with_averages, server shards together hand back one server's averages bit for bit") {
  const auto data = synthetic_data(128, 40, 3, 9);
  auto job = small_job(TrainingMode::sync, 2, 5);
  job.model.settings = {{"hidden_width", std::int64_t{64}}, {"dropout", 0.2}};
  job.training.with_averages = true;
  const auto one = run(job, data);
  job.cluster.servers = 3;
  const auto shards = run(job, data);
  CHECK(shards.final_weights.version == 5);
  CHECK(shards.final_weights.values == one.final_weights.values);
}

TEST_CASE("with_averages in async mode evaluates and ends with the averages the servers keep") {
  const auto data = synthetic_data(128, 12, 3, 5);
  auto job = small_job(TrainingMode::async, 2, 8);
  job.evaluation.frequency = 2;
  job.training.with_averages = true;
  const auto averaged = run(job, data);
  CHECK(averaged.final_weights.version == 16);  // async: every worker's gradient is a step
  const auto values = values_of(averaged.final_weights);
  CHECK(std::all_of(values.begin(), values.end(), [](float v) { return std::isfinite(v); }));
  job.training.with_averages = false;
  CHECK(values != values_of(run(job, data).final_weights));
}

TEST_CASE("with_averages is refused in one line without the optimizer's averages, and for a model with tables") {
  auto without = parse_config("[training]\nwith_averages = true\n[optimizer]\n\"@optimizers\" = \"Adam.v1\"\nuse_averages = false\n",
                               "test.toml");
  REQUIRE_FALSE(without.ok());
  CHECK(without.error().find("training.with_averages") != std::string::npos);
  CHECK(without.error().find("use_averages = false") != std::string::npos);
  CHECK(without.error().find('\n') == std::string::npos);
  // Thinc's default keeps them, so with_averages alone is accepted.
  CHECK(parse_config("[training]\nwith_averages = true\n", "test.toml").ok());
  TrainingJob job;
  job.training.with_averages = true;
  CHECK(check_run_features(job, false).ok());
  const auto tables = check_run_features(job, true);
  REQUIRE_FALSE(tables.ok());
  CHECK(tables.error().find("training.with_averages") != std::string::npos);
  CHECK(tables.error().find("keep no averages") != std::string::npos);
}

TEST_CASE("with_averages from the command line: the saved model scores what the final evaluation printed") {
  TempFolder folder("with-averages");
  const std::string train = "train --config " + config_path("mnist.toml") +
                            " --set training.iterations=20 --set training.with_averages=true --no-metrics";
  const auto trained = run_psgrad(train + " --save " + folder.file("averages.bin"));
  INFO(trained.output);
  REQUIRE(trained.exit_code == 0);
  const auto final_accuracy = after(trained.output, "Final \taccuracy: ");
  REQUIRE_FALSE(final_accuracy.empty());
  const auto scored = run_psgrad("eval --model " + folder.file("averages.bin"));
  INFO(scored.output);
  REQUIRE(scored.exit_code == 0);
  CHECK(after(scored.output, "accuracy: ").rfind(final_accuracy + " (", 0) == 0);
  // Processes with two server shards end with the same averages, bit for bit.
  const auto hash = after(trained.output, "final weights: ");
  const auto processes = run_psgrad(train + " --processes --set cluster.servers=2");
  INFO(processes.output);
  CHECK(processes.exit_code == 0);
  CHECK(after(processes.output, "final weights: ") == hash);
  // A plain run saves other weights.
  const auto plain = run_psgrad("train --config " + config_path("mnist.toml") + " --set training.iterations=20 --no-metrics");
  CHECK(after(plain.output, "final weights: ") != hash);
}

TEST_CASE("a checkpoint written without weight averages resumes into a run that keeps and uses them") {
  TempFolder folder("averages-resume");
  const auto checkpoint = folder.file("run.ckpt");
  const std::string base = "train --config " + config_path("mnist.toml") + " --no-metrics --set training.checkpoint_path=" +
                           checkpoint;
  const auto first = run_psgrad(base + " --set training.iterations=10 --set optimizer.use_averages=false");
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  const auto resumed = run_psgrad(base + " --resume " + checkpoint +
                                  " --set training.iterations=20 --set training.with_averages=true --save " +
                                  folder.file("resumed.bin"));
  INFO(resumed.output);
  CHECK(resumed.exit_code == 0);
  CHECK(after(resumed.output, "final weights: ").rfind("version 20,", 0) == 0);
  const auto scored = run_psgrad("eval --model " + folder.file("resumed.bin"));
  CHECK(after(scored.output, "accuracy: ").rfind(after(resumed.output, "Final \taccuracy: ") + " (", 0) == 0);
}

TEST_CASE("with_averages for a model with tables is refused from the command line in one line naming it") {
  const auto refused = run_psgrad("train --config " + config_path("debian-packages.toml") +
                                  " --set training.with_averages=true --no-metrics");
  INFO(refused.output);
  CHECK(refused.exit_code != 0);
  CHECK(line_count(refused.output) == 1);
  CHECK(refused.output.find("training.with_averages") != std::string::npos);
}
