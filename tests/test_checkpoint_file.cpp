// Tests for checkpoint files: a round trip, that version-2 and -3 files (no data fingerprint, no clocks)
// still read, and that every flipped byte, a truncation, an older version or a file that is not a checkpoint is refused
// in one line naming the file.
#include <doctest/doctest.h>

#include <string>

#include "io/checkpoint_file.hpp"
#include "model/fnv1a.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

TrainingCheckpoint small_checkpoint() {
  TrainingCheckpoint checkpoint;
  checkpoint.config = "[training]\niterations = 5\n";
  checkpoint.iteration = 3;
  checkpoint.version = 3;
  checkpoint.layout_hash = 0x0123456789abcdefull;
  checkpoint.weights = {0.5f, -1.25f, 3.0f, 0.0f};
  checkpoint.optimizer.buffers = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f};
  checkpoint.optimizer.counts = {3, 3};
  WorkerStreamState stream;
  stream.worker = 1;
  stream.data.epoch = 2;
  stream.data.cursor = 40;
  stream.data.epoch_rng = {1, 2, 3, 4};
  stream.dropout = {5, 6, 7, 8};
  checkpoint.workers = {stream};
  checkpoint.data = DataFingerprint{"digits", 40, 784, 10, 0x1111222233334444ull, 0x5555666677778888ull};
  checkpoint.samples = 384;
  checkpoint.wall_seconds = 1.5;
  return checkpoint;
}

// The refusal, after checking it is one line that names the file.
std::string refusal(const std::string& path) {
  auto read = read_checkpoint(path);
  REQUIRE_FALSE(read.ok());
  const auto& message = read.error();
  INFO(message);
  CHECK(message.rfind(path + ": ", 0) == 0);
  CHECK(message.find('\n') == std::string::npos);
  return message;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a checkpoint reads back as it was written") {
  TempFolder folder("checkpoint");
  const auto path = folder.file("run.ckpt");
  const auto written = small_checkpoint();
  REQUIRE(write_checkpoint(path, written).ok());
  auto read = read_checkpoint(path);
  REQUIRE(read.ok());
  CHECK(read->config == written.config);
  CHECK(read->iteration == written.iteration);
  CHECK(read->layout_hash == written.layout_hash);
  CHECK(read->weights == written.weights);
  CHECK(read->optimizer.buffers == written.optimizer.buffers);
  CHECK(read->optimizer.counts == written.optimizer.counts);
  REQUIRE(read->workers.size() == 1);
  CHECK(read->workers[0].data.cursor == 40);
  CHECK(read->workers[0].dropout == written.workers[0].dropout);
  REQUIRE(read->data.has_value());
  CHECK(read->data->name == "digits");
  CHECK(read->data->count == 40);
  CHECK(read->data->images_hash == written.data->images_hash);
  CHECK(read->data->labels_hash == written.data->labels_hash);
  CHECK_FALSE(data_difference(*read->data, *written.data).has_value());
  CHECK(read->samples == 384);
  CHECK(read->wall_seconds == 1.5);
}

TEST_CASE("a version-3 checkpoint, written before checkpoints held their clocks, still reads, with none") {
  TempFolder folder("checkpoint");
  const auto path = folder.file("run.ckpt");
  const auto written = small_checkpoint();
  REQUIRE(write_checkpoint(path, written).ok());
  // Version 4 is version 3's fields, then the samples and wall time, then the checksum.
  const auto current = read_file_bytes(path);
  auto old = current.substr(0, current.size() - 3 * sizeof(std::uint64_t));
  REQUIRE(old[8] == 4);
  old[8] = 3;
  const auto checksum = fnv1a(old.data(), old.size());
  old.append(reinterpret_cast<const char*>(&checksum), sizeof checksum);
  write_file_bytes(path, old);
  auto read = read_checkpoint(path);
  REQUIRE(read.ok());
  CHECK(read->samples == 0);
  CHECK(read->wall_seconds == 0.0);
  REQUIRE(read->data.has_value());
  CHECK(read->data->labels_hash == written.data->labels_hash);
  CHECK(read->weights == written.weights);
}

TEST_CASE("a version-2 checkpoint, written before checkpoints held their data, still reads, without it") {
  TempFolder folder("checkpoint");
  const auto path = folder.file("run.ckpt");
  auto written = small_checkpoint();
  written.data.reset();
  REQUIRE(write_checkpoint(path, written).ok());
  REQUIRE(read_checkpoint(path).ok());
  // Version 4 without data is version 2's fields, a zero byte saying "no data", the samples and the
  // wall time; version 2 signed its fields alone.
  const auto current = read_file_bytes(path);
  auto old = current.substr(0, current.size() - 3 * sizeof(std::uint64_t) - 1);
  REQUIRE(old[8] == 4);
  old[8] = 2;
  const auto checksum = fnv1a(old.data(), old.size());
  old.append(reinterpret_cast<const char*>(&checksum), sizeof checksum);
  write_file_bytes(path, old);
  auto read = read_checkpoint(path);
  REQUIRE(read.ok());
  CHECK_FALSE(read->data.has_value());
  CHECK(read->weights == written.weights);
  REQUIRE(read->workers.size() == 1);
  CHECK(read->workers[0].data.epoch_rng == written.workers[0].data.epoch_rng);
}

TEST_CASE("every flipped byte of a checkpoint is refused: header, body and checksum") {
  TempFolder folder("checkpoint");
  const auto path = folder.file("run.ckpt");
  REQUIRE(write_checkpoint(path, small_checkpoint()).ok());
  const auto original = read_file_bytes(path);
  const auto flipped_path = folder.file("flipped.ckpt");
  std::size_t refused = 0;
  for (std::size_t position = 0; position < original.size(); ++position) {
    for (const unsigned char mask : {0x01, 0x80, 0xff}) {
      auto bytes = original;
      bytes[position] = static_cast<char>(static_cast<unsigned char>(bytes[position]) ^ mask);
      write_file_bytes(flipped_path, bytes);
      INFO("position " << position << " of " << original.size() << ", mask " << int(mask));
      refusal(flipped_path);
      ++refused;
    }
  }
  MESSAGE(refused << " flips of " << original.size() << " byte positions, every one refused");
  CHECK(refused == 3 * original.size());
}

TEST_CASE("a cut, lengthened, too old or too new checkpoint is refused") {
  TempFolder folder("checkpoint");
  const auto path = folder.file("run.ckpt");
  REQUIRE(write_checkpoint(path, small_checkpoint()).ok());
  const auto original = read_file_bytes(path);
  for (std::size_t length : {std::size_t{0}, std::size_t{5}, std::size_t{12}, std::size_t{20}, original.size() - 1}) {
    write_file_bytes(path, original.substr(0, length));
    refusal(path);
  }
  write_file_bytes(path, original + "x");
  CHECK(contains(refusal(path), "checksum mismatch"));
  auto version_one = original;
  version_one[8] = 1;
  write_file_bytes(path, version_one);
  CHECK(contains(refusal(path), "format version 1 is not supported (expected 2 to 4; version 1 had no checksum)"));
  auto version_five = original;
  version_five[8] = 5;
  write_file_bytes(path, version_five);
  CHECK(contains(refusal(path), "format version 5 is not supported (expected 2 to 4)"));
}
