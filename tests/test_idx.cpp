// Tests for the IDX reader and writer: round trips, and one clear error per kind of broken file.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <unistd.h>

#include "io/idx.hpp"
#include "tests/temp_folder.hpp"

namespace fs = std::filesystem;
using namespace psgrad;

namespace {

// A temp folder for this file's tests.
struct TempFolder : testing::TempFolder {
  TempFolder() : testing::TempFolder("idx") {}
};

void write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void append_u32(std::vector<std::uint8_t>& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<std::uint8_t>(value >> shift));
}

std::vector<std::uint8_t> images_header(std::uint32_t magic, std::uint32_t count, std::uint32_t rows,
                                        std::uint32_t cols) {
  std::vector<std::uint8_t> bytes;
  for (std::uint32_t word : {magic, count, rows, cols}) append_u32(bytes, word);
  return bytes;
}

IdxImages sample_images() {
  IdxImages images;
  images.count = 3;
  images.rows = 2;
  images.cols = 4;
  for (std::size_t i = 0; i < 3 * 2 * 4; ++i) images.pixels.push_back(static_cast<std::uint8_t>(i * 11));
  return images;
}

bool is_one_line(const std::string& text) { return text.find('\n') == std::string::npos; }

}  // namespace

TEST_CASE("idx images and labels round trip through raw files") {
  TempFolder folder;
  const IdxImages images = sample_images();
  IdxLabels labels;
  labels.labels = {7, 0, 9};
  REQUIRE(write_idx_images(folder.file("images-idx3-ubyte"), images).ok());
  REQUIRE(write_idx_labels(folder.file("labels-idx1-ubyte"), labels).ok());

  const auto raw = read_bytes(folder.file("images-idx3-ubyte"));
  REQUIRE(raw.size() == 16 + 24);
  CHECK(raw[2] == 0x08);  // big-endian magic 0x00000803
  CHECK(raw[3] == 0x03);
  CHECK(raw[7] == 3);  // count
  CHECK_FALSE(fs::exists(folder.file("images-idx3-ubyte.tmp")));

  auto read_images = read_idx_images(folder.file("images-idx3-ubyte"));
  REQUIRE(read_images.ok());
  CHECK(read_images->count == 3);
  CHECK(read_images->rows == 2);
  CHECK(read_images->cols == 4);
  CHECK(read_images->pixels == images.pixels);
  auto read_labels = read_idx_labels(folder.file("labels-idx1-ubyte"));
  REQUIRE(read_labels.ok());
  CHECK(read_labels->labels == labels.labels);
}

TEST_CASE("idx images and labels round trip through gzip files") {
  TempFolder folder;
  const IdxImages images = sample_images();
  IdxLabels labels;
  labels.labels = {1, 2, 3};
  REQUIRE(write_idx_images(folder.file("images-idx3-ubyte.gz"), images).ok());
  REQUIRE(write_idx_labels(folder.file("labels-idx1-ubyte.gz"), labels).ok());

  const auto raw = read_bytes(folder.file("images-idx3-ubyte.gz"));
  REQUIRE(raw.size() >= 2);
  CHECK(raw[0] == 0x1f);  // the gzip signature: the writer really compressed
  CHECK(raw[1] == 0x8b);

  auto read_images = read_idx_images(folder.file("images-idx3-ubyte.gz"));
  REQUIRE(read_images.ok());
  CHECK(read_images->pixels == images.pixels);
  auto read_labels = read_idx_labels(folder.file("labels-idx1-ubyte.gz"));
  REQUIRE(read_labels.ok());
  CHECK(read_labels->labels == labels.labels);
}

TEST_CASE("idx writer replaces an existing file") {
  TempFolder folder;
  IdxLabels first, second;
  first.labels = {1, 1, 1, 1};
  second.labels = {2};
  REQUIRE(write_idx_labels(folder.file("labels"), first).ok());
  REQUIRE(write_idx_labels(folder.file("labels"), second).ok());
  auto read = read_idx_labels(folder.file("labels"));
  REQUIRE(read.ok());
  CHECK(read->labels == second.labels);
}

TEST_CASE("idx reader rejects a file with the wrong magic") {
  TempFolder folder;
  IdxLabels labels;
  labels.labels = {1, 2};
  const std::string path = folder.file("labels-idx1-ubyte");
  REQUIRE(write_idx_labels(path, labels).ok());

  auto images = read_idx_images(path);
  REQUIRE_FALSE(images.ok());
  CHECK(images.error().find(path) == 0);
  CHECK(images.error().find("wrong magic 0x00000801, expected 0x00000803 (IDX images)") != std::string::npos);
  CHECK(is_one_line(images.error()));

  const std::string images_path = folder.file("images-idx3-ubyte");
  REQUIRE(write_idx_images(images_path, sample_images()).ok());
  auto as_labels = read_idx_labels(images_path);
  REQUIRE_FALSE(as_labels.ok());
  CHECK(as_labels.error().find(images_path) == 0);
  CHECK(as_labels.error().find("wrong magic 0x00000803, expected 0x00000801") != std::string::npos);
}

TEST_CASE("idx reader rejects a truncated image file") {
  TempFolder folder;
  const std::string path = folder.file("truncated-idx3-ubyte");
  auto bytes = images_header(0x803, 60000, 28, 28);
  bytes.resize(bytes.size() + 1234, 0);
  write_bytes(path, bytes);

  auto images = read_idx_images(path);
  REQUIRE_FALSE(images.ok());
  CHECK(images.error() == path + ": truncated: header declares 60000 images of 28x28 (47040000 bytes) but "
                                 "only 1234 bytes follow");
}

TEST_CASE("idx reader rejects a truncated gzip label file") {
  TempFolder folder;
  IdxLabels labels;
  std::uint32_t state = 12345;
  for (int i = 0; i < 5000; ++i) {  // noise, so that half the compressed file holds half the labels
    state = state * 1664525u + 1013904223u;
    labels.labels.push_back(static_cast<std::uint8_t>(state >> 24));
  }
  const std::string whole = folder.file("whole.gz");
  REQUIRE(write_idx_labels(whole, labels).ok());
  const auto compressed = read_bytes(whole);

  SUBCASE("cut within the labels") {
    const std::string path = folder.file("cut-idx1-ubyte.gz");
    write_bytes(path, {compressed.begin(), compressed.begin() + static_cast<long>(compressed.size() / 2)});
    auto read = read_idx_labels(path);
    REQUIRE_FALSE(read.ok());
    CHECK(read.error().find(path + ": truncated: header declares 5000 labels (5000 bytes) but only ") == 0);
    CHECK(read.error().find("(the gzip stream is cut short)") != std::string::npos);
    CHECK(is_one_line(read.error()));
  }
  SUBCASE("cut within the header") {
    const std::string path = folder.file("cut-header-idx1-ubyte.gz");
    write_bytes(path, {compressed.begin(), compressed.begin() + 12});  // the gzip header is 10 bytes
    auto read = read_idx_labels(path);
    REQUIRE_FALSE(read.ok());
    CHECK(read.error().find(path + ": truncated: the gzip stream is cut short") == 0);
  }
}

TEST_CASE("idx reader rejects a file shorter than its header") {
  TempFolder folder;
  const std::string path = folder.file("short");
  auto bytes = images_header(0x803, 1, 2, 2);
  bytes.resize(7);
  write_bytes(path, bytes);
  auto images = read_idx_images(path);
  REQUIRE_FALSE(images.ok());
  CHECK(images.error().find(path) == 0);
  CHECK(images.error().find("truncated") != std::string::npos);

  const std::string empty = folder.file("empty");
  write_bytes(empty, {});
  auto from_empty = read_idx_labels(empty);
  REQUIRE_FALSE(from_empty.ok());
  CHECK(from_empty.error().find(empty) == 0);
  CHECK(from_empty.error().find("empty") != std::string::npos);
}

TEST_CASE("idx reader rejects trailing bytes after the declared data") {
  TempFolder folder;
  const std::string path = folder.file("trailing-idx3-ubyte");
  auto bytes = images_header(0x803, 2, 2, 2);
  bytes.resize(bytes.size() + 8 + 3, 5);
  write_bytes(path, bytes);

  auto images = read_idx_images(path);
  REQUIRE_FALSE(images.ok());
  CHECK(images.error().find(path) == 0);
  CHECK(images.error().find("3 unexpected trailing bytes") != std::string::npos);
  CHECK(is_one_line(images.error()));
}

TEST_CASE("idx reader rejects zero and absurd dimensions") {
  TempFolder folder;
  const std::string zero = folder.file("zero");
  write_bytes(zero, images_header(0x803, 1, 0, 28));
  auto from_zero = read_idx_images(zero);
  REQUIRE_FALSE(from_zero.ok());
  CHECK(from_zero.error().find(zero) == 0);
  CHECK(from_zero.error().find("bad header") != std::string::npos);

  const std::string huge = folder.file("huge");
  write_bytes(huge, images_header(0x803, 1, 4096, 4096));
  auto from_huge = read_idx_images(huge);
  REQUIRE_FALSE(from_huge.ok());
  CHECK(from_huge.error().find(huge) == 0);
  CHECK(from_huge.error().find("exceed") != std::string::npos);

  const std::string many = folder.file("many");
  write_bytes(many, images_header(0x803, (1u << 28) + 1, 1, 1));
  auto from_many = read_idx_images(many);
  REQUIRE_FALSE(from_many.ok());
  CHECK(from_many.error().find("exceeds the limit") != std::string::npos);
}

TEST_CASE("idx reader reports a missing file by its path") {
  const std::string path = (fs::temp_directory_path() / "psgrad-test-idx-no-such-file-idx3-ubyte").string();
  auto images = read_idx_images(path);
  REQUIRE_FALSE(images.ok());
  CHECK(images.error() == path + ": not found");
  auto labels = read_idx_labels(path);
  REQUIRE_FALSE(labels.ok());
  CHECK(labels.error() == path + ": not found");
}

TEST_CASE("idx writer refuses images whose pixel buffer does not match the sizes") {
  TempFolder folder;
  IdxImages images = sample_images();
  images.pixels.pop_back();
  const std::string path = folder.file("bad");
  auto written = write_idx_images(path, images);
  REQUIRE_FALSE(written.ok());
  CHECK(written.error().find(path) == 0);
  CHECK_FALSE(fs::exists(path));
}
