// Tests for what `psgrad predict` reads: every data format, with or without a CSV label column.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "io/idx.hpp"
#include "io/npz_archive.hpp"
#include "io/prediction_inputs.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
std::vector<float> features(const LabeledExamples& examples) { return {examples.inputs.begin(), examples.inputs.end()}; }

}  // namespace

TEST_CASE("a CSV file of feature columns only, or with the label column, gives the same features") {
  testing::TempFolder folder("predict");
  testing::write_file_bytes(folder.file("features.csv"), "a,b\n2,4\n6,8\n");
  testing::write_file_bytes(folder.file("labelled.csv"), "2,4,1\n6,8,0\n");
  DataSource source;
  source.label_column = -1;
  source.scale = 0.5;
  auto plain = read_prediction_inputs(folder.file("features.csv"), 2, source);
  REQUIRE_MESSAGE(plain.ok(), (plain.ok() ? "" : plain.error()));
  auto labelled = read_prediction_inputs(folder.file("labelled.csv"), 2, source);
  REQUIRE_MESSAGE(labelled.ok(), (labelled.ok() ? "" : labelled.error()));
  CHECK(features(*plain) == std::vector<float>{1, 2, 3, 4});
  CHECK(features(*labelled) == features(*plain));
  CHECK(labelled->labels == std::vector<std::uint8_t>{1, 0});
}

TEST_CASE("a CSV file of the wrong width says how many columns the model takes") {
  testing::TempFolder folder("predict");
  testing::write_file_bytes(folder.file("wide.csv"), "1,2,3,4\n");
  auto inputs = read_prediction_inputs(folder.file("wide.csv"), 2, DataSource{});
  REQUIRE_FALSE(inputs.ok());
  CHECK(contains(inputs.error(), "wide.csv: rows of 4 columns, but the model takes 2 inputs: give 2 feature columns, "
                                 "or 3 with the label in column 0"));
}

TEST_CASE("an .npz gives its x_test, a .npy its array, and an IDX file its pixels divided by 255") {
  testing::TempFolder folder("predict");
  REQUIRE(write_npz(folder.file("data.npz"),
                    {{"x_train", npy_array({1, 2}, std::vector<float>{1, 1})},
                     {"x_test", npy_array({2, 2}, std::vector<float>{5, 6, 7, 8})}},
                    false)
              .ok());
  DataSource source;
  auto npz = read_prediction_inputs(folder.file("data.npz"), 2, source);
  REQUIRE_MESSAGE(npz.ok(), (npz.ok() ? "" : npz.error()));
  CHECK(features(*npz) == std::vector<float>{5, 6, 7, 8});

  testing::write_file_bytes(folder.file("x.npy"), npy_bytes(npy_array({1, 2}, std::vector<std::uint8_t>{3, 9})));
  auto npy = read_prediction_inputs(folder.file("x.npy"), 2, source);
  REQUIRE(npy.ok());
  CHECK(features(*npy) == std::vector<float>{3, 9});

  IdxImages images;
  images.count = 1;
  images.rows = 1;
  images.cols = 2;
  images.pixels = {0, 255};
  REQUIRE(write_idx_images(folder.file("images-idx3-ubyte.gz"), images).ok());
  source.scale = 7.0;  // IDX pixels ignore it
  auto idx = read_prediction_inputs(folder.file("images-idx3-ubyte.gz"), 2, source);
  REQUIRE_MESSAGE(idx.ok(), (idx.ok() ? "" : idx.error()));
  CHECK(features(*idx) == std::vector<float>{0, 1});
}

TEST_CASE("predict reports an empty file and a symbolic link loop for what they are") {
  testing::TempFolder folder("predict-kinds");
  const auto empty = folder.file("empty.csv");
  testing::write_file_bytes(empty, "");
  const auto refused = read_prediction_inputs(empty, 4, DataSource{});
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error() == empty + ": is empty (0 bytes), expected examples");
  const auto loop = folder.file("loop.csv");
  std::filesystem::create_symlink(loop, loop);
  CHECK(read_prediction_inputs(loop, 4, DataSource{}).error() == loop + ": is a symbolic link loop");
}

TEST_CASE("predict refuses an .npz whose header shows other features before inflating its array") {
  testing::TempFolder folder("predict-bomb");
  // The header says 1 x 785 bytes; the member holds 64 MiB of zeros, which deflate to a few KiB.
  NpyArray x = npy_array({1, 785}, std::vector<std::uint8_t>(785, 0));
  x.bytes.assign(64u << 20, '\0');
  const auto path = folder.file("bomb.npz");
  REQUIRE(write_npz(path, {{"x_test", x}}, true).ok());
  const auto refused = read_prediction_inputs(path, 784, DataSource{});
  REQUIRE_FALSE(refused.ok());
  CHECK(contains(refused.error(), "785 features per example (shape 1x785), but the model takes 784 inputs"));
  // With the width it claims, the member is refused for holding more than its header declares.
  const auto oversized = read_prediction_inputs(path, 785, DataSource{});
  REQUIRE_FALSE(oversized.ok());
  INFO(oversized.error());
  CHECK(contains(oversized.error(), "declares 67108992 bytes uncompressed, but its header's shape and dtype make 913 bytes"));
}
