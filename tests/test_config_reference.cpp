// Tests for the generated config reference: every validated setting has exactly one row.
#include <doctest/doctest.h>

#include <sstream>
#include <string>

#include "io/config.hpp"
#include "io/config_reference.hpp"
#include "model/layer_registry.hpp"
#include "model/registry.hpp"
#include "model/schedule.hpp"

using namespace psgrad;

namespace {

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t count = 0;
  for (auto at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

std::size_t table_rows(const std::string& text) {
  std::istringstream lines(text);
  std::size_t rows = 0;
  for (std::string line; std::getline(lines, line);) rows += line.rfind("| ", 0) == 0;
  return rows;
}

}  // namespace

TEST_CASE("the config reference has one row per setting of every section and registered entry") {
  const auto reference = config_reference_markdown();
  CHECK(reference.rfind("# Config reference\n", 0) == 0);
  CHECK(count_of(reference, "| Section | Key | Expected | Default | Description |\n") == 1);

  std::size_t settings = 4;  // the "@layers", "@optimizers", "@schedules" and [data.columns] rows
  auto check_section = [&](const std::string& section, const std::vector<SettingSpec>& specs) {
    for (const auto& spec : specs) {
      CAPTURE(section);
      CAPTURE(spec.name);
      CHECK(count_of(reference, "| " + section + " | `" + spec.name + "` | " + describe_expected(spec) + " |") == 1);
      ++settings;
    }
  };
  check_section("training", training_settings());
  check_section("evaluation", evaluation_settings());
  check_section("tables", tables_settings());
  check_section("data", data_settings());
  check_section("cluster", cluster_settings());
  for (const auto& name : architecture_names()) check_section("model (" + name + ")", find_architecture(name)->settings);
  for (const auto& name : optimizer_names()) check_section("optimizer (" + name + ")", find_optimizer(name)->settings);
  for (const auto& name : schedule_names())
    check_section("optimizer.learn_rate (" + name + ")", find_schedule(name)->settings);
  const auto sections_end = reference.find("\n## ");
  CHECK(table_rows(reference.substr(0, sections_end)) == settings + 1);  // + the header row
  // Then one row per layer of Thinc's that [model] may be written in.
  const auto layers_at = reference.find("\n## Thinc's layers\n");
  REQUIRE(layers_at != std::string::npos);
  CHECK(table_rows(reference.substr(layers_at)) == layer_names().size() + 1);
  for (const auto& name : layer_names()) CHECK(count_of(reference, "| `" + name + "` |") == 1);
}

TEST_CASE("the config reference shows defaults as a config spells them") {
  const auto reference = config_reference_markdown();
  CHECK(reference.find("| training | `iterations` | an integer >= 1 | `200` |") != std::string::npos);
  CHECK(reference.find("| `dropout` | a number in [0, 1) | `0.2` |") != std::string::npos);
  CHECK(reference.find("| `learn_rate` | a number > 0 | (required) |") != std::string::npos);
  CHECK(reference.find("| cluster | `host` | a string | `\"127.0.0.1\"` |") != std::string::npos);
  CHECK(reference.find("| data | `path` | a string | `\"\"` |") != std::string::npos);
}
