// serve --port-file: the address line, and the file a reader finds whole or not at all.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "apps/port_file.hpp"

using namespace psgrad;

namespace {

// A fresh folder under the system's temporary folder, removed with what is in it.
struct ScratchFolder {
  std::filesystem::path path;
  ScratchFolder() {
    std::string name = (std::filesystem::temp_directory_path() / "psgrad-port-file-XXXXXX").string();
    REQUIRE(mkdtemp(name.data()) != nullptr);
    path = name;
  }
  ~ScratchFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
  std::size_t entries() const {
    return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(path), {}));
  }
};

}  // namespace

TEST_CASE("the address line reads back as written, and anything else is refused") {
  const auto line = served_address_line({"10.0.0.1", 40563});
  CHECK(line == R"({"host":"10.0.0.1","port":40563})");
  const auto address = parse_served_address(line);
  REQUIRE(address.ok());
  CHECK(address->host == "10.0.0.1");
  CHECK(address->port == 40563);
  CHECK(parse_served_address(R"({"host":"a \"quoted\" name","port":1})")->host == "a \"quoted\" name");
  CHECK_FALSE(parse_served_address("psgrad serve: listening on 127.0.0.1:4242, waiting for 2 workers").ok());
  CHECK_FALSE(parse_served_address(R"({"host":"h"})").ok());
  CHECK_FALSE(parse_served_address(R"({"host":"h","port":0})").ok());
  CHECK_FALSE(parse_served_address(R"({"host":"h","port":70000})").ok());
  CHECK_FALSE(parse_served_address(R"({"host":"h","port":-1})").ok());
  CHECK_FALSE(parse_served_address(R"({"host":1,"port":80})").ok());
  CHECK_FALSE(parse_served_address("[1, 2]").ok());
}

TEST_CASE("a port file appears whole once written, replaces a stale one, and goes with its server") {
  ScratchFolder folder;
  const auto path = (folder.path / "server.json").string();
  std::ofstream(path) << R"({"host":"127.0.0.1","port":1111})" << "\n";  // an earlier server's
  {
    auto file = PortFile::create(path);
    REQUIRE(file.ok());
    auto nothing_yet = read_port_file(path);
    REQUIRE(nothing_yet.ok());
    CHECK_FALSE(nothing_yet->has_value());
    REQUIRE(file->write({"127.0.0.1", 40563}).ok());
    auto found = read_port_file(path);
    REQUIRE(found.ok());
    REQUIRE(found->has_value());
    CHECK((*found)->port == 40563);
    CHECK(folder.entries() == 1);  // no temporary file left beside it
    CHECK_FALSE(file->write({"127.0.0.1", 1}).ok());
  }
  CHECK(folder.entries() == 0);
}

TEST_CASE("a port file that cannot be written is refused before the server listens, and leaves nothing") {
  ScratchFolder folder;
  const auto path = (folder.path / "missing" / "server.json").string();
  const auto file = PortFile::create(path);
  REQUIRE_FALSE(file.ok());
  CHECK(file.error().find("cannot write beside " + path) == 0);
  {
    auto never_written = PortFile::create((folder.path / "server.json").string());
    REQUIRE(never_written.ok());
  }
  CHECK(folder.entries() == 0);
  std::ofstream((folder.path / "garbled.json").string()) << "listening on 127.0.0.1:4242\n";
  const auto garbled = read_port_file((folder.path / "garbled.json").string());
  REQUIRE_FALSE(garbled.ok());
  CHECK(garbled.error().find("garbled.json: not a JSON object") != std::string::npos);
}
