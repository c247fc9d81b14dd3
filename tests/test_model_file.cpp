// Tests for model files: the byte round trip, the rebuild check, and one clear refusal per kind of bad file.
#include <cmath>
#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <iterator>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "io/config.hpp"
#include "io/model_file.hpp"
#include "io/saved_model.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;
using psgrad::testing::read_file_bytes;
using psgrad::testing::TempFolder;
using psgrad::testing::write_file_bytes;

namespace {

constexpr std::size_t kInputs = 6, kClasses = 3;

Config small_config() {
  auto config = parse_config("[model]\n\"@layers\" = \"relu_relu_softmax.v1\"\nhidden_width = 4\ndropout = 0.0\n",
                             "small.toml");
  REQUIRE(config.ok());
  return *config;
}

Model small_model(const Config& config) {
  auto model = Model::build(config.model.architecture, config.model.settings, kInputs, kClasses);
  REQUIRE(model.ok());
  model->initialize(7);
  return std::move(model).value();
}

ModelFileHeader header_for(const Config& config, const Model& model) {
  ModelFileHeader header;
  header.weights_version = 42;
  header.input_width = kInputs;
  header.num_classes = kClasses;
  header.image_rows = 2;
  header.image_cols = 3;
  header.architecture = config.model.architecture;
  header.config_text = render_config(config);
  header.layout_description = model.layout().describe();
  header.layout_hash = model.layout().hash();
  return header;
}

// A valid model file in folder; returns its path.
std::string write_valid(const TempFolder& folder, const std::string& name = "model.psgrad") {
  const auto config = small_config();
  const auto model = small_model(config);
  const auto path = folder.file(name);
  REQUIRE(write_model_file(path, header_for(config, model), model.weights().data(), model.weights().size()).ok());
  return path;
}

// The refusal message, after checking it is one line that names the file.
template <class R>
std::string refusal(const R& result, const std::string& path) {
  REQUIRE_FALSE(result.ok());
  const auto& message = result.error();
  INFO("message: " << message);
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.find(path) != std::string::npos);
  return message;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("a model file reads back exactly what was written") {
  TempFolder folder("model-file");
  const auto config = small_config();
  const auto model = small_model(config);
  const auto header = header_for(config, model);
  const auto path = folder.file("model.psgrad");
  REQUIRE(write_model_file(path, header, model.weights().data(), model.weights().size()).ok());

  auto contents = read_model_file(path);
  REQUIRE(contents.ok());
  CHECK(contents->header.format_version == model_file_format_version);
  CHECK(contents->header.weights_version == 42);
  CHECK(contents->header.input_width == kInputs);
  CHECK(contents->header.num_classes == kClasses);
  CHECK(contents->header.image_rows == 2);
  CHECK(contents->header.image_cols == 3);
  CHECK(contents->header.architecture == header.architecture);
  CHECK(contents->header.config_text == header.config_text);
  CHECK(contents->header.layout_description == header.layout_description);
  CHECK(contents->header.layout_hash == header.layout_hash);
  REQUIRE(contents->weights.size() == model.weights().size());
  CHECK(std::memcmp(contents->weights.data(), model.weights().data(), model.weights().size() * 4) == 0);
  CHECK(read_file_bytes(path).compare(0, 8, "PSGRADMF") == 0);
  const auto entries = std::distance(std::filesystem::directory_iterator(folder.path), std::filesystem::directory_iterator());
  CHECK(entries == 1);  // no temporary file left behind
}

TEST_CASE("a loaded model predicts exactly as the saved one") {
  TempFolder folder("model-file");
  const auto config = small_config();
  auto model = small_model(config);
  const auto path = folder.file("model.psgrad");
  REQUIRE(write_model_file(path, header_for(config, model), model.weights().data(), model.weights().size()).ok());

  auto loaded = load_saved_model(path);
  REQUIRE(loaded.ok());
  CHECK(loaded->config.model.settings == config.model.settings);
  const std::vector<float> inputs = {0.1f, 0.9f, 0.3f, 0.0f, 1.0f, 0.5f, 0.7f, 0.2f, 0.4f, 0.8f, 0.6f, 0.05f};
  const ConstMatrixMap x(inputs.data(), 2, kInputs);
  const Matrix expected = model.predict(x);
  const Matrix actual = loaded->model.predict(x);
  CHECK(std::memcmp(expected.data(), actual.data(), expected.size() * sizeof(float)) == 0);
}

TEST_CASE("model files refuse a wrong magic") {
  TempFolder folder("model-file");
  const auto path = write_valid(folder);
  auto bytes = read_file_bytes(path);
  bytes[0] = 'X';
  write_file_bytes(path, bytes);
  CHECK(contains(refusal(read_model_file(path), path), "wrong magic"));
  write_file_bytes(path, "[training]\niterations = 3\n");
  CHECK(contains(refusal(load_saved_model(path), path), "not a psgrad model file"));
}

TEST_CASE("model files refuse an unsupported format version") {
  TempFolder folder("model-file");
  const auto path = write_valid(folder);
  auto bytes = read_file_bytes(path);
  bytes[8] = 2;  // the u32 version follows the 8-byte magic
  write_file_bytes(path, bytes);
  CHECK(contains(refusal(read_model_file(path), path), "unsupported model file format version 2"));
}

TEST_CASE("model files refuse truncation wherever the file ends") {
  TempFolder folder("model-file");
  const auto path = write_valid(folder);
  const auto bytes = read_file_bytes(path);
  for (std::size_t size : {std::size_t{0}, std::size_t{5}, std::size_t{10}, std::size_t{40}, std::size_t{100},
                           bytes.size() / 2, bytes.size() - 9, bytes.size() - 1}) {
    CAPTURE(size);
    const auto cut = folder.file("cut.psgrad");
    write_file_bytes(cut, bytes.substr(0, size));
    CHECK(contains(refusal(read_model_file(cut), cut), "truncated"));
  }
}

TEST_CASE("model files refuse flipped bits and trailing bytes") {
  TempFolder folder("model-file");
  const auto path = write_valid(folder);
  auto bytes = read_file_bytes(path);
  bytes[bytes.size() - 20] ^= 0x01;  // inside the weights
  write_file_bytes(path, bytes);
  CHECK(contains(refusal(read_model_file(path), path), "checksum mismatch"));
  write_file_bytes(path, read_file_bytes(write_valid(folder, "good.psgrad")) + "extra");
  CHECK(contains(refusal(read_model_file(path), path), "5 unexpected bytes"));
}

TEST_CASE("a model whose stored layout hash differs from the rebuilt layout is refused") {
  TempFolder folder("model-file");
  const auto config = small_config();
  const auto model = small_model(config);
  auto header = header_for(config, model);
  header.layout_hash ^= 1;
  const auto path = folder.file("model.psgrad");
  REQUIRE(write_model_file(path, header, model.weights().data(), model.weights().size()).ok());
  REQUIRE(read_model_file(path).ok());  // the file itself is sound: only the rebuild disagrees
  CHECK(contains(refusal(load_saved_model(path), path), "does not match"));
  CHECK(contains(load_saved_model(path).error(), "layout hash"));
}

TEST_CASE("a model whose config builds another architecture is refused") {
  TempFolder folder("model-file");
  const auto config = small_config();
  const auto model = small_model(config);
  auto header = header_for(config, model);
  auto wider = parse_config("[model]\n\"@layers\" = \"relu_relu_softmax.v1\"\nhidden_width = 5\n", "wider.toml");
  REQUIRE(wider.ok());
  header.config_text = render_config(*wider);  // hidden_width 5 builds other shapes than the stored layout's
  const auto path = folder.file("model.psgrad");
  REQUIRE(write_model_file(path, header, model.weights().data(), model.weights().size()).ok());
  CHECK(contains(refusal(load_saved_model(path), path), "layout hash"));
}

TEST_CASE("a model with too few weights for its layout is refused") {
  TempFolder folder("model-file");
  const auto config = small_config();
  const auto model = small_model(config);
  const auto path = folder.file("model.psgrad");
  REQUIRE(write_model_file(path, header_for(config, model), model.weights().data(), model.weights().size() - 1).ok());
  CHECK(contains(refusal(load_saved_model(path), path), fmt::format("holds {} weights", model.weights().size() - 1)));
}

TEST_CASE("a model whose stored config no longer parses is refused") {
  TempFolder folder("model-file");
  const auto config = small_config();
  const auto model = small_model(config);
  auto header = header_for(config, model);
  header.config_text += "\n[training]\nno_such_key = 1\n";
  const auto path = folder.file("model.psgrad");
  REQUIRE(write_model_file(path, header, model.weights().data(), model.weights().size()).ok());
  CHECK(contains(refusal(load_saved_model(path), path), "stored config"));
}

TEST_CASE("inputs of another width than the model's are refused, naming both") {
  TempFolder folder("model-file");
  const auto path = write_valid(folder);
  auto loaded = load_saved_model(path);
  REQUIRE(loaded.ok());
  CHECK(check_input_width(*loaded, 2, 3, "images.idx").ok());
  const auto message = refusal(check_input_width(*loaded, 8, 8, "images.idx"), "images.idx");
  CHECK(contains(message, "image size 8x8 (64 inputs)"));
  CHECK(contains(message, path));
  CHECK(contains(message, "2x3 images (6 inputs)"));
}

TEST_CASE("writing a model file into a missing folder fails cleanly") {
  TempFolder folder("model-file");
  const std::vector<float> weights(3, 1.0f);
  const auto path = folder.file("missing/model.psgrad");
  CHECK(contains(refusal(write_model_file(path, ModelFileHeader{}, weights.data(), weights.size()), path),
                 "cannot write model file"));
  CHECK(std::filesystem::is_empty(folder.path));
}

TEST_CASE("a model with NaN or infinite weights is refused: training diverged") {
  TempFolder folder("model-file");
  const auto config = small_config();
  const auto model = small_model(config);
  std::vector<float> weights(model.weights().begin(), model.weights().end());
  weights[3] = std::nanf("");
  const auto path = folder.file("model.psgrad");
  REQUIRE(write_model_file(path, header_for(config, model), weights.data(), weights.size()).ok());
  CHECK(contains(refusal(load_saved_model(path), path), "weight 3 is nan"));
  CHECK(contains(load_saved_model(path).error(), "diverged"));
}
