// Tests for [data.columns]: kinds, max_id, data.label and data.max_tokens, one-line refusals naming the
// key, the render round trip, and that a run refuses named columns until a model can take them.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "io/config.hpp"
#include "io/config_reference.hpp"
#include "io/data_source.hpp"

using namespace psgrad;

namespace {

const std::string kColumns = R"(
[data]
path = "packages.jsonl"
label = "section"
max_tokens = 64

[data.columns]
summary = "text"
depends = "ids"
price = "number"
user = { kind = "ids", max_id = 999 }
)";

Config parse_ok(const std::string& text, const std::vector<std::string>& overrides = {}) {
  auto config = parse_config(text, "test.toml", overrides);
  INFO("error: " << (config ? std::string() : config.error()));
  REQUIRE(config.ok());
  return *config;
}

std::string parse_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  auto config = parse_config(text, "test.toml", overrides);
  REQUIRE_FALSE(config.ok());
  const auto& message = config.error();
  INFO("message: " << message);
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.rfind("test.toml: ", 0) == 0);
  return message;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("[data.columns] declares each column's kind, in name order, with data.label and data.max_tokens") {
  const auto config = parse_ok(kColumns);
  const auto& columns = config.data.columns;
  REQUIRE(columns.size() == 4);
  CHECK(columns[0] == DataColumn{"depends", ColumnKind::ids, std::nullopt});
  CHECK(columns[1] == DataColumn{"price", ColumnKind::number, std::nullopt});
  CHECK(columns[2] == DataColumn{"summary", ColumnKind::text, std::nullopt});
  CHECK(columns[3] == DataColumn{"user", ColumnKind::ids, 999});
  CHECK(config.data.label == "section");
  CHECK(config.data.max_tokens == 64);
}

TEST_CASE("a config without [data.columns] has no named columns and the default token bound") {
  const auto config = parse_ok("");
  CHECK(config.data.columns.empty());
  CHECK(config.data.label.empty());
  CHECK(config.data.max_tokens == DataSection{}.max_tokens);
}

TEST_CASE("[data.columns] renders so that it parses back the same") {
  const auto config = parse_ok(kColumns);
  const auto text = render_config(config);
  CHECK(contains(text, "[data.columns]"));
  const auto again = parse_ok(text);
  CHECK(again.data.columns == config.data.columns);
  CHECK(again.data.label == config.data.label);
  CHECK(again.data.max_tokens == config.data.max_tokens);
  CHECK(render_config(again) == text);
}

TEST_CASE("[data.columns] refuses an unknown kind, a wrong type and a misplaced max_id, naming the column") {
  const std::string head = "[data]\npath = \"x.jsonl\"\nlabel = \"y\"\n[data.columns]\n";
  auto message = parse_error(head + "a = \"words\"\n");
  CHECK(contains(message, "data.columns.a: expected one of \"ids\", \"text\", \"number\", got \"words\""));
  message = parse_error(head + "a = 3\n");
  CHECK(contains(message, "data.columns.a: expected one of \"ids\", \"text\", \"number\" or a table"));
  CHECK(contains(message, "got an integer"));
  message = parse_error(head + "a = { kind = \"text\", max_id = 5 }\n");
  CHECK(contains(message, "data.columns.a.max_id: only an \"ids\" column takes max_id"));
  message = parse_error(head + "a = { kind = \"ids\", max_id = -1 }\n");
  CHECK(contains(message, "data.columns.a.max_id: expected an integer of at least 0, got -1"));
  message = parse_error(head + "a = { kind = \"ids\", range = 5 }\n");
  CHECK(contains(message, "data.columns.a.range: unknown key"));
  message = parse_error(head + "a = { max_id = 5 }\n");
  CHECK(contains(message, "data.columns.a.kind: missing"));
  message = parse_error("[data]\npath = \"x.jsonl\"\nlabel = \"y\"\ncolumns = \"text\"\n");
  CHECK(contains(message, "data.columns: expected a table"));
  message = parse_error(head);
  CHECK(contains(message, "data.columns: expected a table of column name"));
  CHECK(contains(message, "got an empty table"));
}

TEST_CASE("named columns need data.label and data.path, and data.label needs named columns") {
  auto message = parse_error("[data]\npath = \"x.jsonl\"\n[data.columns]\na = \"ids\"\n");
  CHECK(contains(message, "data.label: missing; named columns ([data.columns]) need the name of the label's column"));
  message = parse_error("[data]\nlabel = \"y\"\n[data.columns]\na = \"ids\"\n");
  CHECK(contains(message, "data.path: missing"));
  message = parse_error("[data]\nlabel = \"y\"\n");
  CHECK(contains(message, "data.label: names the label column of named columns, but [data.columns] declares none"));
  message = parse_error("[data]\npath = \"x.jsonl\"\nlabel = \"a\"\n[data.columns]\na = \"ids\"\n");
  CHECK(contains(message, "data.label: \"a\" is declared in [data.columns] as an input"));
  message = parse_error(kColumns, {"data.max_tokens=0"});
  CHECK(contains(message, "data.max_tokens"));
  CHECK(contains(message, "(from --set)"));
}

TEST_CASE("--set declares a named column as the file would") {
  const auto config = parse_ok(kColumns, {"data.columns.title=text"});
  REQUIRE(config.data.columns.size() == 5);
  CHECK(config.data.columns[3] == DataColumn{"title", ColumnKind::text, std::nullopt});
  const auto message = parse_error(kColumns, {"data.columns.title=words"});
  CHECK(contains(message, "data.columns.title: expected one of"));
  CHECK(contains(message, "(from --set)"));
}

TEST_CASE("a run with named columns is refused in one line until a model takes embedding tables") {
  const auto config = parse_ok(kColumns);
  const std::string expected = "data.columns: sparse inputs need a model with embedding tables (hashembed_mlp.v1)";
  auto split = load_data_source(data_source(config.data), "");
  REQUIRE_FALSE(split.ok());
  CHECK(split.error() == expected);
  auto shared = load_data_shared(data_source(config.data), "");
  REQUIRE_FALSE(shared.ok());
  CHECK(shared.error() == expected);
  auto shape = peek_data_shape(data_source(config.data), "");
  REQUIRE_FALSE(shape.ok());
  CHECK(shape.error() == expected);
}

TEST_CASE("the config reference lists data.columns, data.label and data.max_tokens") {
  const auto reference = config_reference_markdown();
  CHECK(contains(reference, "| data | `columns` |"));
  CHECK(contains(reference, "| data | `label` |"));
  CHECK(contains(reference, "| data | `max_tokens` |"));
}
