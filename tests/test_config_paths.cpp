// Tests for paths in configs: relative to the config file's folder, --set ones relative to the working
// directory, and "not found" errors that say where they looked.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "io/config.hpp"
#include "io/data_source.hpp"
#include "io/named_datasets.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;
using psgrad::testing::TempFolder;
using psgrad::testing::write_file_bytes;

namespace fs = std::filesystem;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Writes <folder>/configs/run.toml with the given lines; returns its path.
std::string write_config(const TempFolder& folder, const std::string& lines) {
  fs::create_directories(folder.path / "configs");
  const auto path = (folder.path / "configs" / "run.toml").string();
  write_file_bytes(path, lines);
  return path;
}

}  // namespace

TEST_CASE("a config's relative data, dev and checkpoint paths resolve from the config file's folder") {
  TempFolder folder("config-paths");
  const auto config_path = write_config(folder, "[training]\ncheckpoint_path = \"runs/a.ckpt\"\n\n"
                                                "[data]\npath = \"train.csv\"\ndev_path = \"../shared/dev.csv\"\n");
  auto config = load_config(config_path);
  REQUIRE_MESSAGE(config, config.error());
  CHECK(config->data.path == (folder.path / "configs" / "train.csv").string());
  CHECK(config->data.dev_path == (folder.path / "shared" / "dev.csv").string());
  CHECK(config->training.checkpoint_path == (folder.path / "configs" / "runs" / "a.ckpt").string());
}

TEST_CASE("an absolute path in a config and a path given by --set are left as they are") {
  TempFolder folder("config-paths-set");
  const auto config_path = write_config(folder, "[data]\npath = \"/srv/data/train.csv\"\n");
  auto config = load_config(config_path, {"data.dev_path=dev.csv", "training.checkpoint_path=\"here.ckpt\""});
  REQUIRE_MESSAGE(config, config.error());
  CHECK(config->data.path == "/srv/data/train.csv");
  // Typed on the command line: relative to where the command runs.
  CHECK(config->data.dev_path == "dev.csv");
  CHECK(config->training.checkpoint_path == "here.ckpt");
}

TEST_CASE("a config parsed from text, as a worker gets it from its server, keeps its paths") {
  auto config = parse_config("[data]\npath = \"train.csv\"\n", "config from server 10.0.0.1:4242");
  REQUIRE_MESSAGE(config, config.error());
  CHECK(config->data.path == "train.csv");
}

TEST_CASE("a TLS file a config names but that is missing is refused with the config, the key and the full path") {
  TempFolder folder("config-paths-tls");
  const auto config_path = write_config(folder, "[cluster]\ntls_ca = \"ca.pem\"\ntls_key = \"keys/server.key\"\n");
  write_file_bytes((folder.path / "configs" / "ca.pem").string(), "x");
  auto config = load_config(config_path);
  REQUIRE_FALSE(config);
  CHECK(config.error() == fmt::format("{}: cluster.tls_key: {} not found (a relative path in a config is relative "
                                      "to the config's folder)",
                                      config_path, (folder.path / "configs" / "keys" / "server.key").string()));
}

TEST_CASE("a relative data path that is not there says the full path it looked for") {
  auto format = data_format("no-such-folder/train.csv");
  REQUIRE_FALSE(format);
  CHECK(format.error() == fmt::format("no-such-folder/train.csv: not found (looked for {})",
                                      (fs::current_path() / "no-such-folder" / "train.csv").string()));
}

TEST_CASE("without the MNIST data folder the error says how to point at one: --data-dir or PSGRAD_DATA") {
  TempFolder folder("config-paths-no-data");
  auto resolved = resolve_data_folder("mnist", folder.file("data"));
  REQUIRE_FALSE(resolved);
  CHECK(contains(resolved.error(), "--data-dir DIR"));
  CHECK(contains(resolved.error(), "PSGRAD_DATA=DIR"));
  CHECK(contains(resolved.error(), "scripts/setup.sh"));
  CHECK(contains(resolved.error(), "(data folder " + folder.file("data") + ")"));
}
