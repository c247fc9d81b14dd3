// Tests for TensorBoard event files: what io/tensorboard_events.cpp writes is read back by an
// independent reader (tests/tensorboard_reader.hpp), frame by frame and field by field, from the unit
// writer up to `psgrad train --tensorboard`.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <fmt/format.h>

#include "apps/tensorboard_output.hpp"
#include "io/tensorboard_events.hpp"
#include "tests/temp_folder.hpp"
#include "tests/tensorboard_reader.hpp"

using namespace psgrad;
using psgrad::testing::read_event_records;
using psgrad::testing::read_file_bytes;
using psgrad::testing::TempFolder;

namespace {

// The single event file in a folder.
std::string only_event_file(const std::filesystem::path& folder) {
  std::string found;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) {
    found = entry.path().string();
    ++count;
  }
  REQUIRE_MESSAGE(count == 1, "expected one event file in ", folder.string());
  return found;
}

std::map<std::string, float> values_of(const psgrad::testing::ReadEvent& event) {
  std::map<std::string, float> values;
  for (const auto& value : event.values) values[value.tag] = value.simple_value;
  return values;
}

}  // namespace

TEST_CASE("CRC-32C gives the standard check value, in the writer and in the test's own reader") {
  const std::string check = "123456789";
  CHECK(crc32c(check.data(), check.size()) == 0xE3069283u);
  CHECK(psgrad::testing::bitwise_crc32c(check) == 0xE3069283u);
  CHECK(crc32c("", 0) == 0u);
}

TEST_CASE("an event file starts with the brain.Event:2 version and holds each scalar's tag, value and step") {
  TempFolder folder("tensorboard");
  const auto before = unix_seconds(std::chrono::system_clock::now());
  auto file = EventFile::create_in((folder.path / "runs" / "one").string());
  REQUIRE_MESSAGE(file, file.error());
  CHECK(std::filesystem::path((*file)->path()).filename().string().rfind("events.out.tfevents.", 0) == 0);
  REQUIRE((*file)->write_scalars(10, {{"dev/accuracy", 0.875f}, {"train/loss", 1.5f}}));
  REQUIRE((*file)->write_scalars(300, {{"dev/accuracy", 0.9f}}));

  const auto read = read_event_records(read_file_bytes((*file)->path()));
  REQUIRE_MESSAGE(read.problem.empty(), read.problem);
  REQUIRE(read.events.size() == 3);
  CHECK(read.events[0].file_version == "brain.Event:2");
  CHECK(read.events[0].values.empty());
  CHECK(read.events[0].wall_time >= std::floor(before));
  CHECK(read.events[1].step == 10);
  CHECK(read.events[1].values.size() == 2);
  CHECK(values_of(read.events[1])["dev/accuracy"] == 0.875f);
  CHECK(values_of(read.events[1])["train/loss"] == 1.5f);
  CHECK(read.events[2].step == 300);  // a varint of two bytes
  CHECK(read.events[2].wall_time >= read.events[1].wall_time);
  CHECK(values_of(read.events[2])["dev/accuracy"] == 0.9f);
}

TEST_CASE("a flipped byte in an event file fails the record's CRC") {
  std::string bytes = tfrecord(scalars_event(1.0e9, 5, {{"dev/loss", 0.25f}}));
  REQUIRE(read_event_records(bytes).problem.empty());
  for (const std::size_t at : {std::size_t{2}, std::size_t{20}, bytes.size() - 1}) {
    std::string damaged = bytes;
    damaged[at] = static_cast<char>(damaged[at] ^ 0x10);
    CHECK_FALSE(read_event_records(damaged).problem.empty());
  }
}

TEST_CASE("an evaluation's scalars: dev accuracy and loss, train loss once a batch went in, samples/s since the last") {
  EvaluationReport first;
  first.accuracy = 0.1;
  first.loss = 2.3;
  const auto at_start = evaluation_scalars(first, std::nullopt);
  std::map<std::string, float> start;
  for (const auto& scalar : at_start) start[scalar.tag] = scalar.value;
  CHECK(start.count("dev/accuracy") == 1);
  CHECK(start.count("train/loss") == 0);
  CHECK(start.count("train/samples_per_second") == 0);

  EvaluationReport later = first;
  later.iteration = 10;
  later.progress.samples = 2560;
  later.progress.wall_seconds = 0.5;
  later.progress.train_loss = 0.75;
  later.progress.staleness_mean = 1.5;
  later.progress.staleness_max = 4;
  std::map<std::string, float> values;
  for (const auto& scalar : evaluation_scalars(later, first.progress)) values[scalar.tag] = scalar.value;
  CHECK(values["train/loss"] == 0.75f);
  CHECK(values["train/samples_per_second"] == doctest::Approx(5120.0));
  CHECK(values["staleness/mean"] == 1.5f);
  CHECK(values["staleness/max"] == 4.0f);
}

TEST_CASE("psgrad train --tensorboard writes one dev accuracy per printed line, at the printed step") {
  TempFolder folder("tensorboard-run");
  const auto out = folder.file("run.out");
  const auto command = fmt::format(
      "'{}/apps/psgrad' train --config '{}/configs/mnist.toml' --no-metrics --mode async --set training.iterations=20 "
      "--tensorboard '{}' >'{}' 2>/dev/null",
      PSGRAD_BINARY_DIR, PSGRAD_SOURCE_DIR, folder.file("tb"), out);
  REQUIRE_MESSAGE(std::system(command.c_str()) == 0, "the run failed: ", command);
  const auto read = read_event_records(read_file_bytes(only_event_file(folder.path / "tb")));
  REQUIRE_MESSAGE(read.problem.empty(), read.problem);
  REQUIRE(read.events.size() >= 2);
  CHECK(read.events[0].file_version == "brain.Event:2");

  // "10<TAB>accuracy: 0.512" lines; the Final line is the last event.
  std::ifstream printed(out);
  std::string line;
  std::vector<std::pair<std::string, std::string>> lines;
  while (std::getline(printed, line)) {
    const auto tab = line.find("\taccuracy: ");
    if (tab != std::string::npos) lines.emplace_back(line.substr(0, tab), line.substr(tab + 11));
  }
  REQUIRE(lines.size() + 1 == read.events.size());
  for (std::size_t k = 0; k < lines.size(); ++k) {
    const auto& event = read.events[k + 1];
    if (lines[k].first != "Final ") CHECK(std::to_string(event.step) == lines[k].first);
    auto values = values_of(event);
    // The event holds a float, the line a double rounded to 3 decimals.
    CHECK(std::abs(values["dev/accuracy"] - std::stod(lines[k].second)) <= 0.0005 + 1e-6);
    CHECK(values.count("dev/loss") == 1);
    CHECK(values.count("staleness/mean") == 1);
    if (k > 0) CHECK(values.count("train/samples_per_second") == 1);
  }
}
