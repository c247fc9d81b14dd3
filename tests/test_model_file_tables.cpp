// Tests for the model file with embedding tables: a round trip of every field, refusals of damaged
// files in one line.
#include <doctest/doctest.h>

#include <limits>
#include <string>

#include "io/model_file.hpp"
#include "io/saved_model.hpp"
#include "model/sparse_model.hpp"
#include "temp_folder.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

ModelFileContents example_file() {
  ModelFileContents file;
  file.header.weights_version = 42;
  file.header.architecture = "hashembed_mlp.v1";
  file.header.config_text = "[model]\n\"@layers\" = \"hashembed_mlp.v1\"\n";
  auto& tables = file.tables.emplace();
  tables.label = "colour";
  tables.max_tokens = 16;
  tables.columns = {DataColumn{"noise", ColumnKind::ids, 99}, DataColumn{"words", ColumnKind::text, std::nullopt}};
  tables.class_names = {"blue", "green", "red"};
  file.weights = {0.5f, -1.25f, 3.0e-8f};
  SparseRows rows({3, 17, 1ull << 40}, 2);
  for (std::size_t i = 0; i < rows.values.size(); ++i) rows.values[i] = 0.1f * static_cast<float>(i) - 0.2f;
  tables.tables = {SavedTable{11, rows}, SavedTable{12, SparseRows({}, 4)}};
  return file;
}

}  // namespace

TEST_CASE("a model file with tables reads back every field it was written with") {
  TempFolder folder("sparse-model-file");
  const auto path = folder.file("model.psg");
  const auto written = example_file();
  REQUIRE(write_model_file(path, written).ok());
  CHECK(model_file_has_tables(path));
  auto read = read_model_file(path);
  REQUIRE(read.ok());
  CHECK(read->header.weights_version == 42);
  CHECK(read->header.architecture == written.header.architecture);
  CHECK(read->header.config_text == written.header.config_text);
  CHECK(read->header.num_classes == 3);
  CHECK(read->weights == written.weights);
  REQUIRE(read->tables.has_value());
  CHECK(read->tables->label == "colour");
  CHECK(read->tables->max_tokens == 16);
  CHECK(read->tables->columns == written.tables->columns);
  CHECK(read->tables->class_names == written.tables->class_names);
  REQUIRE(read->tables->tables.size() == 2);
  for (std::size_t t = 0; t < 2; ++t) {
    const auto& got = read->tables->tables[t];
    const auto& put = written.tables->tables[t];
    CHECK(got.init_seed == put.init_seed);
    CHECK(got.rows.width == put.rows.width);
    CHECK(got.rows.keys == put.rows.keys);
    CHECK(got.rows.values == put.rows.values);
  }
}

TEST_CASE("a damaged model file with tables is refused in one line naming it") {
  TempFolder folder("sparse-model-damaged");
  const auto path = folder.file("model.psg");
  REQUIRE(write_model_file(path, example_file()).ok());
  const auto bytes = read_file_bytes(path);
  auto refusal = [&](const std::string& content) {
    write_file_bytes(path, content);
    auto read = read_model_file(path);
    REQUIRE_FALSE(read.ok());
    CHECK(read.error().rfind(path + ": ", 0) == 0);
    CHECK(read.error().find('\n') == std::string::npos);
    return read.error();
  };
  CHECK(refusal(bytes.substr(0, bytes.size() - 9)).find("truncated model file") != std::string::npos);
  auto flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;
  CHECK(refusal(flipped).find("corrupted model file") != std::string::npos);
  // Under the dense layout's magic the same bytes are read as a dense file, and refused as one.
  CHECK(refusal("PSGRADMF" + bytes.substr(8)).find("model file") != std::string::npos);
  CHECK_FALSE(model_file_has_tables(path));
}

namespace {

// A file whose config builds: two id columns, each a table of width 4, and three classes.
ModelFileContents loadable_file() {
  ModelFileContents file;
  file.header.architecture = "hashembed_mlp.v1";
  file.header.config_text =
      "[model]\n\"@layers\" = \"hashembed_mlp.v1\"\nembedding_widths = [4, 4]\nembedding_rows = [64, 64]\n"
      "hidden_width = 8\n";
  auto& tables = file.tables.emplace();
  tables.label = "colour";
  tables.columns = {DataColumn{"a", ColumnKind::ids, std::nullopt}, DataColumn{"b", ColumnKind::ids, std::nullopt}};
  tables.class_names = {"blue", "green", "red"};
  const auto config = parse_config(file.header.config_text, "loadable.toml").value();
  const auto model = SparseModel::build(config.model, 3, {}).value();
  file.weights.assign(model.dense().parameter_count(), 0.01f);
  for (std::uint64_t seed : {7, 8}) {
    SparseRows rows({1, 5}, 4);
    rows.values.assign(rows.values.size(), 0.5f);
    tables.tables.push_back(SavedTable{seed, rows});
  }
  return file;
}

}  // namespace

TEST_CASE("a saved model with tables whose weights or rows are not finite is refused in one line, as a dense one is") {
  TempFolder folder("tables-model-finite");
  const auto path = folder.file("model.psg");
  REQUIRE(write_model_file(path, loadable_file()).ok());
  const auto loaded = load_tables_model(path);
  REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error()));
  CHECK(loaded->model.fields().size() == 2);

  auto diverged = loadable_file();
  diverged.weights[3] = std::numeric_limits<float>::quiet_NaN();
  REQUIRE(write_model_file(path, diverged).ok());
  auto refused = load_tables_model(path);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error() == path + ": weight 3 is nan: the model diverged in training and cannot be used");

  auto bad_row = loadable_file();
  bad_row.tables->tables[1].rows.values[6] = std::numeric_limits<float>::infinity();
  REQUIRE(write_model_file(path, bad_row).ok());
  refused = load_tables_model(path);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error() == path + ": table 1 holds inf in the row of key 5: the model diverged in training and "
                                  "cannot be used");
}

TEST_CASE("each kind of saved model is refused by the other's loader in one line") {
  TempFolder folder("tables-model-kinds");
  const auto path = folder.file("model.psg");
  REQUIRE(write_model_file(path, loadable_file()).ok());
  const auto dense = load_saved_model(path);
  REQUIRE_FALSE(dense.ok());
  CHECK(dense.error().find("a model file with embedding tables") != std::string::npos);
}
