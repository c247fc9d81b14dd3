// Tests for the largest size of embedding tables (model/table_memory.hpp) and the refusal of tables
// that could outgrow the machine (apps/table_memory_check.hpp).
#include <doctest/doctest.h>

#include <string>

#include "apps/table_memory_check.hpp"
#include "io/config.hpp"
#include "model/table_memory.hpp"
#include "sparse_cli_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

TEST_CASE("tables that could outgrow the machine are refused with their sizes before training") {
  // Four billion rows of 64 floats with lazy Adam's two moments: about 4.3 TB, whatever the machine.
  auto config = parse_config(colour_config("x.jsonl"), "big.toml",
                             {"model.embedding_rows=[4294967296, 50]", "model.embedding_widths=[64, 4]"});
  REQUIRE(config.ok());
  const std::uint64_t machine = std::uint64_t{24} << 30;
  auto refused = check_tables_fit(*config, 1, machine);
  REQUIRE_FALSE(refused.ok());
  INFO(refused.error());
  CHECK(refused.error().rfind("big.toml: the embedding tables can grow to ", 0) == 0);
  CHECK(refused.error().find("noise 4294967296 rows x 64 floats") != std::string::npos);
  CHECK(refused.error().find("this machine has 24 GiB") != std::string::npos);
  CHECK(refused.error().find('\n') == std::string::npos);
  // The same tables fit where the machine holds their largest size, and shards split them.
  const std::vector<TableSize> tables{{"noise", 4294967296ull, 64}, {"words", 50, 4}};
  const double whole = shard_table_bytes(tables, optimizer_state_per_value(false), 1);
  CHECK(whole == doctest::Approx(4294967296.0 * (64 * 4 * 3 + kTableRowOverheadBytes) + 50.0 * (4 * 4 * 3 + 64)));
  CHECK(check_tables_fit(*config, 1, static_cast<std::uint64_t>(whole) + 1).ok());
  CHECK(shard_table_bytes(tables, optimizer_state_per_value(true), 4) < whole / 4);
  // Adagrad keeps one float a value besides the row, lazy Adam two.
  config->tables.optimizer = "adagrad";
  CHECK(check_tables_fit(*config, 1, static_cast<std::uint64_t>(whole * 0.7)).ok());
}
