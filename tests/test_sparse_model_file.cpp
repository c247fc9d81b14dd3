// Tests for the model file with embedding tables: a round trip of every field, refusals of damaged
// files in one line.
#include <doctest/doctest.h>

#include <string>

#include "io/sparse_model_file.hpp"
#include "temp_folder.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

SparseModelFile example_file() {
  SparseModelFile file;
  file.weights_version = 42;
  file.architecture = "hashembed_mlp.v1";
  file.config_text = "[model]\n\"@layers\" = \"hashembed_mlp.v1\"\n";
  file.label = "colour";
  file.max_tokens = 16;
  file.columns = {DataColumn{"noise", ColumnKind::ids, 99}, DataColumn{"words", ColumnKind::text, std::nullopt}};
  file.class_names = {"blue", "green", "red"};
  file.dense_weights = {0.5f, -1.25f, 3.0e-8f};
  SparseRows rows({3, 17, 1ull << 40}, 2);
  for (std::size_t i = 0; i < rows.values.size(); ++i) rows.values[i] = 0.1f * static_cast<float>(i) - 0.2f;
  file.tables = {SavedTable{11, rows}, SavedTable{12, SparseRows({}, 4)}};
  return file;
}

}  // namespace

TEST_CASE("a sparse model file reads back every field it was written with") {
  TempFolder folder("sparse-model-file");
  const auto path = folder.file("model.psg");
  const auto written = example_file();
  REQUIRE(write_sparse_model_file(path, written).ok());
  CHECK(is_sparse_model_file(path));
  auto read = read_sparse_model_file(path);
  REQUIRE(read.ok());
  CHECK(read->weights_version == 42);
  CHECK(read->architecture == written.architecture);
  CHECK(read->config_text == written.config_text);
  CHECK(read->label == "colour");
  CHECK(read->max_tokens == 16);
  CHECK(read->columns == written.columns);
  CHECK(read->class_names == written.class_names);
  CHECK(read->dense_weights == written.dense_weights);
  REQUIRE(read->tables.size() == 2);
  for (std::size_t t = 0; t < 2; ++t) {
    CHECK(read->tables[t].init_seed == written.tables[t].init_seed);
    CHECK(read->tables[t].rows.width == written.tables[t].rows.width);
    CHECK(read->tables[t].rows.keys == written.tables[t].rows.keys);
    CHECK(read->tables[t].rows.values == written.tables[t].rows.values);
  }
}

TEST_CASE("a damaged sparse model file is refused in one line naming it") {
  TempFolder folder("sparse-model-damaged");
  const auto path = folder.file("model.psg");
  REQUIRE(write_sparse_model_file(path, example_file()).ok());
  const auto bytes = read_file_bytes(path);
  auto refusal = [&](const std::string& content) {
    write_file_bytes(path, content);
    auto read = read_sparse_model_file(path);
    REQUIRE_FALSE(read.ok());
    CHECK(read.error().rfind(path + ": ", 0) == 0);
    CHECK(read.error().find('\n') == std::string::npos);
    return read.error();
  };
  CHECK(refusal(bytes.substr(0, bytes.size() - 9)).find("truncated model file") != std::string::npos);
  auto flipped = bytes;
  flipped[bytes.size() / 2] ^= 0x40;
  CHECK(refusal(flipped).find("corrupted model file") != std::string::npos);
  CHECK(refusal("PSGRADMF" + bytes.substr(8)).find("not a psgrad model file with embedding tables") !=
        std::string::npos);
  CHECK_FALSE(is_sparse_model_file(path));
}
