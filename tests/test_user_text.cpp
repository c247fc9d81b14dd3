// Tests for echoing user input in messages: cut at about 200 characters, control characters escaped.
#include <doctest/doctest.h>

#include <string>

#include "io/config.hpp"
#include "io/user_text.hpp"

using namespace psgrad;

TEST_CASE("short input is echoed as it is, long input is cut with ...") {
  CHECK(echoed("batch_size") == "batch_size");
  CHECK(echoed(std::string(200, 'x')) == std::string(200, 'x'));
  CHECK(echoed(std::string(100000, 'x')) == std::string(200, 'x') + "...");
  CHECK(echoed("a\nb\tc\x01") == "a\\nb\\tc\\x01");
}

TEST_CASE("a cut never ends inside a UTF-8 character") {
  std::string text(199, 'x');
  for (int i = 0; i < 10; ++i) text += "\xc3\xa9";  // é
  const auto cut = echoed(text);
  CHECK(cut == std::string(199, 'x') + "...");
}

TEST_CASE("config errors echo at most about 200 characters of a huge --set value, key or section") {
  const std::string huge(100000, 'x');
  for (const auto& override_text : {"training.batch_size=\"" + huge + "\"", "training." + huge + "=1", huge,
                                    huge + ".key=1", "model.@layers=" + huge, "cluster.mode=" + huge}) {
    auto config = parse_config("", "test.toml", {override_text});
    REQUIRE_FALSE(config.ok());
    INFO(config.error().substr(0, 300));
    CHECK(config.error().size() < 600);
    CHECK(config.error().find("...") != std::string::npos);
    CHECK(config.error().find('\n') == std::string::npos);
  }
}
