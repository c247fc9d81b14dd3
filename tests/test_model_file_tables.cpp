// Tests for the model file with embedding tables: a round trip of every field, refusals of damaged
// files in one line.
#include <doctest/doctest.h>

#include <string>

#include "io/model_file.hpp"
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
