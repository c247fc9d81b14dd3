// Tests for replacing files whole: new contents in place, old contents kept on failure, no leftovers.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include "io/atomic_file.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;
using psgrad::testing::read_file_bytes;
using psgrad::testing::TempFolder;
using psgrad::testing::write_file_bytes;

namespace {

std::size_t files_in(const std::filesystem::path& folder) {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(folder)) ++count;
  return count;
}

}  // namespace

TEST_CASE("an atomic write replaces the file and leaves no temporary file") {
  TempFolder folder("atomic-file");
  const auto path = folder.file("weights.bin");
  write_file_bytes(path, "old contents");
  REQUIRE(write_file_atomically(path, "test file", std::string_view("new")).ok());
  CHECK(read_file_bytes(path) == "new");
  CHECK(files_in(folder.path) == 1);
  CHECK((std::filesystem::status(path).permissions() & std::filesystem::perms::others_read) !=
        std::filesystem::perms::none);
}

TEST_CASE("an atomic write into a missing folder names the file, what it is and the system's reason") {
  TempFolder folder("atomic-file");
  const auto path = folder.file("missing/model.psgrad");
  auto written = write_file_atomically(path, "model file", std::string_view("bytes"));
  REQUIRE_FALSE(written.ok());
  const auto& message = written.error();
  INFO(message);
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.rfind(path + ": cannot write model file: ", 0) == 0);
  CHECK(message.find("No such file or directory") != std::string::npos);
  CHECK(std::filesystem::is_empty(folder.path));
}

TEST_CASE("a failed atomic write keeps the old contents and removes its temporary file") {
  TempFolder folder("atomic-file");
  const auto path = folder.file("run.ckpt");
  write_file_bytes(path, "old contents");
  auto written = write_file_atomically(path, "checkpoint", [](int fd) -> Status {
    if (auto part = write_fully(fd, "half", 4); !part) return part;
    return Error{"write: No space left on device"};
  });
  REQUIRE_FALSE(written.ok());
  CHECK(written.error() == path + ": cannot write checkpoint: write: No space left on device");
  CHECK(read_file_bytes(path) == "old contents");
  CHECK(files_in(folder.path) == 1);
}

TEST_CASE("a write removes the temporary files killed writers left, and leaves a live writer's alone") {
  TempFolder folder("atomic-file");
  const auto path = folder.file("run.ckpt");
  write_file_bytes(folder.file("run.ckpt.tmp-a1B2c3"), "left by a killed writer");
  write_file_bytes(folder.file("run.ckpt.tmp-Zz9Yy8"), "left by another");
  write_file_bytes(folder.file("other.ckpt.tmp-a1B2c3"), "another file's");
  write_file_bytes(folder.file("run.ckpt.tmp-seven77"), "not a temporary name");
  const auto live = folder.file("run.ckpt.tmp-LiVe00");
  write_file_bytes(live, "being written");
  const int live_fd = ::open(live.c_str(), O_RDONLY);
  REQUIRE(live_fd >= 0);
  REQUIRE(::flock(live_fd, LOCK_EX) == 0);
  REQUIRE(write_file_atomically(path, "checkpoint", std::string_view("new")).ok());
  ::close(live_fd);
  CHECK(read_file_bytes(path) == "new");
  CHECK_FALSE(std::filesystem::exists(folder.file("run.ckpt.tmp-a1B2c3")));
  CHECK_FALSE(std::filesystem::exists(folder.file("run.ckpt.tmp-Zz9Yy8")));
  CHECK(std::filesystem::exists(folder.file("other.ckpt.tmp-a1B2c3")));
  CHECK(std::filesystem::exists(folder.file("run.ckpt.tmp-seven77")));
  CHECK(std::filesystem::exists(live));
}
