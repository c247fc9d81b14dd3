// Mistakes on the command line end in one short line and exit code 2, whatever CLI11 would say.
#include <doctest/doctest.h>

#include <string>

#include "tests/psgrad_binary.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad::testing;

namespace {
bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("a mistyped command is named with the nearest command, in one line, exit code 2") {
  const auto typo = run_psgrad("trian --config x.toml");
  INFO(typo.output);
  CHECK(typo.exit_code == 2);
  CHECK(line_count(typo.output) == 1);
  CHECK(contains(typo.output, "unknown command \"trian\" (did you mean train?)"));
  const auto huge = run_psgrad(std::string(5000, 'q'));
  CHECK(huge.exit_code == 2);
  CHECK(huge.output.size() < 600);
}

TEST_CASE("an option value beyond its type is refused in one line with exit code 2") {
  const auto refused = run_psgrad("shard --index 2147483648 --connect 127.0.0.1:1");
  INFO(refused.output);
  CHECK(refused.exit_code == 2);
  CHECK(line_count(refused.output) == 1);
  CHECK(contains(refused.output, "--index: expected an integer from 1 to 2147483647, got 2147483648"));
  const auto unknown = run_psgrad("train --no-such-option");
  INFO(unknown.output);
  CHECK(unknown.exit_code == 2);
  CHECK(line_count(unknown.output) == 1);
}

TEST_CASE("errors that echo a 5000-character path or a 100000-character host name cut it to about 200") {
  const auto path = run_psgrad("train --config /tmp/" + std::string(5000, 'p') + ".toml");
  INFO(path.output.substr(0, 300));
  CHECK(path.exit_code == 2);
  CHECK(line_count(path.output) == 1);
  CHECK(path.output.size() < 400);
  TempFolder folder("long-host");
  const auto hostfile = folder.file("hosts.txt");
  write_file_bytes(hostfile, std::string(100000, 'h') + "\n" + std::string(100000, 'h') + "\n");
  const auto host = run_psgrad("launch --dry-run --hostfile " + hostfile + " --config " + config_path("mnist.toml"));
  INFO(host.output.substr(0, 300));
  CHECK(host.exit_code == 2);
  CHECK(host.output.size() < 600);
}
