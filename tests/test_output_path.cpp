// Output paths: what exists and is not a regular file is refused, never replaced, and a path that
// cannot be written is found out before a run starts.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <sys/stat.h>

#include "io/atomic_file.hpp"
#include "io/metrics_writer.hpp"
#include "io/output_path.hpp"
#include "tests/psgrad_binary.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("output paths that exist and are not regular files are refused, naming what they are") {
  TempFolder folder("output-path");
  const auto fifo = folder.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const auto refused = check_output_path(fifo, "model file (--save)");
  REQUIRE_FALSE(refused.ok());
  CHECK(contains(refused.error(), "is a FIFO (named pipe), not a regular file"));
  CHECK(contains(check_output_path("/dev/null", "checkpoint").error(), "is a character device"));
  CHECK(contains(check_output_path(folder.path.string(), "trace file").error(), "is a folder"));
  CHECK(check_output_path(folder.file("new.ckpt"), "checkpoint").ok());
  // The probe leaves nothing behind.
  CHECK(std::distance(std::filesystem::directory_iterator(folder.path), std::filesystem::directory_iterator()) == 1);
}

TEST_CASE("output paths that cannot be created are refused before any work, their echo cut short") {
  TempFolder folder("output-path");
  const auto missing_folder = check_output_path(folder.file("no/such/folder/model.psgrad"), "model file");
  CHECK(contains(missing_folder.error(), "No such file or directory"));
  const std::string long_name = folder.file(std::string(5000, 'x'));
  const auto too_long = check_output_path(long_name, "checkpoint");
  REQUIRE_FALSE(too_long.ok());
  CHECK(contains(too_long.error(), "name too long"));
  CHECK(too_long.error().size() < 400);
  // An empty name (`--out ''`) is refused before any work, not at the rename after it.
  const auto empty = check_output_path("", "JSON Lines file (--out)");
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error() == "JSON Lines file (--out): the path is empty; expected a file name");
}

TEST_CASE("writers refuse to replace a FIFO or device with a regular file") {
  TempFolder folder("output-path");
  const auto fifo = folder.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  CHECK_FALSE(write_file_atomically(fifo, "checkpoint", std::string_view("bytes")).ok());
  struct stat status {};
  REQUIRE(::stat(fifo.c_str(), &status) == 0);
  CHECK(S_ISFIFO(status.st_mode));
  // Opening a FIFO for writing would block until a reader came.
  CHECK_FALSE(MetricsWriter::create(fifo).ok());
}

TEST_CASE("train refuses every output path that is not a regular file before it loads data") {
  TempFolder folder("output-path");
  const auto fifo = folder.file("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  const std::string run = "train --config " + config_path("mnist.toml") + " --set training.iterations=1 --metrics '' ";
  for (const std::string option : {"--save " + fifo, "--save-weights " + fifo, "--trace " + fifo, "--metrics " + fifo,
                                   "--set training.checkpoint_path=" + fifo,
                                   "--set training.checkpoint_path=" + folder.file(std::string(5000, 'c'))}) {
    const auto refused = run_psgrad(run + option);
    INFO(option.substr(0, 80) << ": " << refused.output);
    CHECK(refused.exit_code == 2);
    CHECK(line_count(refused.output) == 1);
    CHECK_FALSE(contains(refused.output, "Running"));
    CHECK(refused.output.size() < 600);
  }
  struct stat status {};
  REQUIRE(::stat(fifo.c_str(), &status) == 0);
  CHECK(S_ISFIFO(status.st_mode));
}
