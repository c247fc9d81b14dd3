// Tests for opening files to read: only regular files within a size limit, refused before reading.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <sys/stat.h>

#include "io/bounded_file.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;
using psgrad::testing::TempFolder;
using psgrad::testing::write_file_bytes;

namespace {

std::string refusal(const std::string& path, std::uint64_t max_bytes = 1 << 20) {
  auto read = read_checked_file(path, "test file", max_bytes);
  REQUIRE_FALSE(read.ok());
  INFO(read.error());
  CHECK(read.error().rfind(path + ": ", 0) == 0);
  CHECK(read.error().find('\n') == std::string::npos);
  return read.error();
}

}  // namespace

TEST_CASE("a regular file within the limit is read whole") {
  TempFolder folder("bounded-file");
  const auto path = folder.file("small");
  write_file_bytes(path, "twelve bytes");
  auto read = read_checked_file(path, "test file", 12);
  REQUIRE(read.ok());
  CHECK(*read == "twelve bytes");
  CHECK(read_checked_file(folder.file("empty-missing"), "test file", 12).error() ==
        folder.file("empty-missing") + ": cannot open test file");
}

TEST_CASE("devices, FIFOs and folders are refused without being read") {
  TempFolder folder("bounded-file");
  CHECK(refusal("/dev/zero") == "/dev/zero: is a character device, not a test file");
  const auto fifo = folder.file("fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK(refusal(fifo) == fifo + ": is a FIFO (named pipe), not a test file");  // and did not block
  CHECK(refusal(folder.path.string()) == folder.path.string() + ": is a folder, not a test file");
}

TEST_CASE("a file over the limit is refused by its size, even a sparse terabyte") {
  TempFolder folder("bounded-file");
  const auto path = folder.file("big");
  write_file_bytes(path, std::string(2048, 'x'));
  CHECK(refusal(path, 1024) == path + ": is 2.0 KiB, more than any test file (at most 1.0 KiB)");
  std::filesystem::resize_file(path, std::uint64_t{1} << 40);
  CHECK(refusal(path) == path + ": is 1.0 TiB, more than any test file (at most 1.0 MiB)");
}
