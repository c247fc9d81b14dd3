// Reading a [data] source: the format of each path, its train and test parts, the dev split, the classes.
#include "io/data_source.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>

#include <unistd.h>

#include <fmt/format.h>

#include "io/bounded_file.hpp"
#include "io/csv_examples.hpp"
#include "io/npz_archive.hpp"

namespace psgrad {
namespace fs = std::filesystem;
namespace {

constexpr const char* kZipSignature = "PK\x03\x04";
constexpr const char* kNpySignature = "\x93NUMPY";

// Anything but a folder: a FIFO or a device under a data file's name is then refused by the reader
// as what it is, not taken for a missing file. A symbolic link loop counts too (the reader says so).
bool exists_as_file(const fs::path& path) {
  std::error_code error;
  const auto status = fs::status(path, error);
  if (error && error.value() == ELOOP) return true;
  return fs::exists(status) && !fs::is_directory(status);
}

// The first bytes of a file, to tell formats apart; empty when it cannot be read (the reader then says why).
std::string leading_bytes(const std::string& path, std::size_t count) {
  auto file = open_checked_file(path, "data file", kMaxCsvBytes);
  if (!file) return {};
  std::string bytes(count, '\0');
  const auto got = ::read(file->fd(), bytes.data(), count);
  bytes.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return bytes;
}

// A path's examples: its train part and, for the formats that have one, its test part.
struct PathExamples {
  std::optional<LabeledExamples> train;
  std::optional<LabeledExamples> test;
};

// What to read of a path.
struct Wanted {
  bool train = true;
  bool test = true;  // when the format has a test part
};

LabeledExamples from_dataset(const Dataset& data, const std::string& origin) {
  LabeledExamples examples;
  examples.count = data.count;
  examples.width = data.width;
  examples.image_rows = data.image_rows;
  examples.image_cols = data.image_cols;
  examples.inputs = data.inputs;
  examples.labels = data.labels;
  examples.origin = origin;
  return examples;
}

Result<PathExamples> read_idx_folder(const std::string& folder, Wanted wanted) {
  auto parts = load_idx_folder_parts(folder);
  if (!parts) return Error{parts.error()};
  PathExamples examples;
  if (wanted.train) examples.train = from_dataset(parts->train, folder + " (train files)");
  if (wanted.test && parts->test) examples.test = from_dataset(*parts->test, folder + " (t10k files)");
  return examples;
}

Result<PathExamples> read_npy_folder(const std::string& folder, Wanted wanted, double scale) {
  PathExamples examples;
  auto read_pair = [&](const char* x_stem, const char* y_stem) -> Result<LabeledExamples> {
    const auto x_path = (fs::path(folder) / fmt::format("{}.npy", x_stem)).string();
    const auto y_path = (fs::path(folder) / fmt::format("{}.npy", y_stem)).string();
    if (!exists_as_file(y_path))
      return Error{fmt::format("{}: has {}.npy but no {}.npy with its labels", folder, x_stem, y_stem)};
    auto x = read_npy_file(x_path);
    if (!x) return Error{x.error()};
    auto y = read_npy_file(y_path);
    if (!y) return Error{y.error()};
    return examples_from_arrays(*x, x_path, *y, y_path, scale);
  };
  if (wanted.train) {
    auto train = read_pair("x_train", "y_train");
    if (!train) return Error{train.error()};
    examples.train = std::move(*train);
  }
  if (wanted.test && exists_as_file(fs::path(folder) / "x_test.npy")) {
    auto test = read_pair("x_test", "y_test");
    if (!test) return Error{test.error()};
    examples.test = std::move(*test);
  }
  return examples;
}

Result<PathExamples> read_npz(const std::string& path, Wanted wanted, double scale) {
  auto archive = NpzArchive::open(path);
  if (!archive) return Error{archive.error()};
  PathExamples examples;
  auto read_pair = [&](const std::string& x_name, const std::string& y_name) -> Result<LabeledExamples> {
    auto x = archive->read(x_name);
    if (!x) return Error{x.error()};
    auto y = archive->read(y_name);
    if (!y) return Error{y.error()};
    return examples_from_arrays(*x, fmt::format("{}: {}", path, x_name), *y, fmt::format("{}: {}", path, y_name),
                                scale);
  };
  if (wanted.train) {
    auto train = read_pair("x_train", "y_train");
    if (!train) return Error{train.error()};
    examples.train = std::move(*train);
  }
  if (wanted.test && (archive->has("x_test") || archive->has("y_test"))) {
    auto test = read_pair("x_test", "y_test");
    if (!test) return Error{test.error()};
    examples.test = std::move(*test);
  }
  return examples;
}

Result<PathExamples> read_csv(const std::string& path, std::int64_t label_column, double scale) {
  auto rows = read_csv_examples(path, CsvLayout{label_column, scale});
  if (!rows) return Error{rows.error()};
  PathExamples examples;
  examples.train = std::move(*rows);
  return examples;
}

Result<PathExamples> read_path(const std::string& path, const DataSource& source, Wanted wanted) {
  auto format = data_format(path);
  if (!format) return Error{format.error()};
  switch (*format) {
    case DataFormat::idx_folder: return read_idx_folder(path, wanted);
    case DataFormat::npy_folder: return read_npy_folder(path, wanted, source.scale);
    case DataFormat::npz_file: return read_npz(path, wanted, source.scale);
    case DataFormat::csv_file: return read_csv(path, source.label_column, source.scale);
  }
  return Error{fmt::format("{}: unknown data format", path)};
}

std::string shape_text(const LabeledExamples& examples) {
  if (examples.image_rows && examples.image_cols) return fmt::format("{}x{}", examples.image_rows, examples.image_cols);
  return fmt::format("{} features", examples.width);
}

std::string path_label(const std::string& path) {
  fs::path normal = fs::path(path).lexically_normal();
  if (normal.filename().empty()) normal = normal.parent_path();
  const std::string name = normal.filename().string();
  return name.empty() ? path : name;
}

// Whether the source is what the IDX-only reader handles alone: a named set or an IDX folder, split
// as its files are.
bool is_plain_idx(const DataSource& source) {
  if (!source.dev_path.empty() || source.dev_fraction > 0) return false;
  if (source.path.empty()) return true;
  auto format = data_format(source.path);
  return format && *format == DataFormat::idx_folder;
}

Status check_scale_applies(const DataSource& source, const std::string& path) {
  if (source.scale == 1.0) return success();
  return Error{fmt::format("{}: data.scale {} applies to CSV and NumPy data; IDX pixels are always divided by 255 "
                           "(remove data.scale)",
                           path, source.scale)};
}

// Named columns are bags of ids for embedding tables, which the dense architectures do not have.
std::optional<Error> sparse_inputs_refusal(const DataSource& source) {
  if (source.columns.empty()) return std::nullopt;
  return Error{"data.columns: sparse inputs need a model with embedding tables (hashembed_mlp.v1)"};
}

}  // namespace

Result<DataFormat> data_format(const std::string& path) {
  if (auto missing = missing_path(path)) return *missing;
  std::error_code ec;
  const auto status = fs::status(path, ec);
  if (fs::is_directory(status)) {
    if (exists_as_file(fs::path(path) / "x_train.npy") || exists_as_file(fs::path(path) / "x_test.npy"))
      return DataFormat::npy_folder;
    return DataFormat::idx_folder;
  }
  const std::string leading = leading_bytes(path, 6);
  if (leading.compare(0, 4, kZipSignature) == 0) return DataFormat::npz_file;
  if (leading.compare(0, 6, kNpySignature) == 0 || fs::path(path).extension() == ".npy")
    return Error{fmt::format("{}: a single .npy array holds no labels; put x_train.npy and y_train.npy (and "
                             "x_test.npy, y_test.npy) in a folder and give the folder",
                             path)};
  if (fs::path(path).extension() == ".npz") return DataFormat::npz_file;  // the reader says what is wrong
  return DataFormat::csv_file;
}

Result<LabeledExamples> load_dev_examples(const std::string& path, const DataSource& source) {
  if (auto refused = sparse_inputs_refusal(source)) return *refused;
  auto format = data_format(path);
  if (!format) return Error{format.error()};
  auto read = read_path(path, source, Wanted{*format == DataFormat::csv_file, true});
  if (!read) return Error{read.error()};
  if (read->test) return std::move(*read->test);
  if (read->train) return std::move(*read->train);  // a CSV file: every row
  return Error{fmt::format("{}: has no test part (x_test and y_test) to use as dev examples", path)};
}

Result<DataSplit> load_data_source(const DataSource& source, const std::string& data_dir) {
  if (auto refused = sparse_inputs_refusal(source)) return *refused;
  if (is_plain_idx(source)) {
    const std::string where = source.path.empty() ? source.name : source.path;
    if (auto applies = check_scale_applies(source, where); !applies) return Error{applies.error()};
    if (source.path.empty()) return load_named_data(source.name, data_dir);
    return load_data_folder(source.path);
  }
  std::string path = source.path;
  if (path.empty()) {
    auto folder = resolve_data_folder(source.name, data_dir);
    if (!folder) return Error{folder.error()};
    path = *folder;
  }
  if (!source.dev_path.empty() && source.dev_fraction > 0)
    return Error{fmt::format("data.dev_path {} and data.dev_fraction {}: set one of them, not both", source.dev_path,
                             source.dev_fraction)};
  auto format = data_format(path);
  if (!format) return Error{format.error()};
  if (*format == DataFormat::idx_folder) {
    if (auto applies = check_scale_applies(source, path); !applies) return Error{applies.error()};
  }
  auto read = read_path(path, source, Wanted{true, source.dev_path.empty()});
  if (!read) return Error{read.error()};
  LabeledExamples train = std::move(*read->train);
  LabeledExamples dev;
  std::string dev_text;
  if (!source.dev_path.empty()) {
    auto from_dev_path = load_dev_examples(source.dev_path, source);
    if (!from_dev_path) return Error{from_dev_path.error()};
    dev = std::move(*from_dev_path);
    dev_text = fmt::format(", dev from {}", source.dev_path);
  } else if (source.dev_fraction > 0) {
    if (read->test)
      return Error{fmt::format("{}: data.dev_fraction {}: this data already has a test part ({}), which is the dev "
                               "set; unset data.dev_fraction",
                               path, source.dev_fraction, read->test->origin)};
    auto split = split_by_fraction(std::move(train), source.dev_fraction);
    if (!split) return Error{split.error()};
    train = std::move(split->first);
    dev = std::move(split->second);
    dev_text = fmt::format(", dev the last {:g}% of each class", 100.0 * source.dev_fraction);
  } else if (read->test) {
    dev = std::move(*read->test);
  } else {
    return Error{fmt::format("{}: has no test part to evaluate on; set data.dev_path (a file of dev examples) or "
                             "data.dev_fraction (a share of these examples to hold out)",
                             path)};
  }
  if (train.width != dev.width)
    return Error{fmt::format("{} has {} features per example but {} has {}", train.origin, train.width, dev.origin,
                             dev.width)};
  std::size_t largest = 0;
  for (const auto* part : {&train, &dev})
    for (const auto label : part->labels) largest = std::max<std::size_t>(largest, label);
  const std::size_t num_classes = largest + 1;
  if (num_classes < 2)
    return Error{fmt::format("{}: every label is 0; a classifier needs at least two classes", train.origin)};
  DataSplit split;
  split.description = fmt::format("{}: {} train / {} dev, {}, {} classes, {}, from {}{}", path_label(path),
                                  train.count, dev.count, shape_text(train), num_classes, feature_range_text(train),
                                  path, dev_text);
  split.train = std::make_shared<const Dataset>(to_dataset(std::move(train), num_classes));
  split.dev = std::make_shared<const Dataset>(to_dataset(std::move(dev), num_classes));
  split.train_fingerprint = fingerprint_of(*split.train, path_label(path));
  return split;
}

Result<DataSplit> load_data_shared(const DataSource& source, const std::string& data_dir) {
  if (auto refused = sparse_inputs_refusal(source)) return *refused;
  if (is_plain_idx(source) && source.scale == 1.0) return load_data_shared(source.name, source.path, data_dir);
  auto canonical = [](const std::string& path) {
    if (path.empty()) return path;
    std::error_code ec;
    auto key = fs::weakly_canonical(path, ec);
    return (ec ? fs::absolute(path, ec).lexically_normal() : key).string();
  };
  const auto key = std::make_tuple(source.name, canonical(source.path), source.label_column,
                                   canonical(source.dev_path), source.dev_fraction, source.scale, data_dir);
  static std::mutex mutex;
  static std::map<decltype(key), DataSplit> loaded;
  // Held while loading too, so that workers starting together read the files only once.
  std::lock_guard<std::mutex> lock(mutex);
  if (auto hit = loaded.find(key); hit != loaded.end()) return hit->second;
  auto split = load_data_source(source, data_dir);
  if (!split) return split;  // failures are not cached: the files may appear later
  loaded.emplace(key, *split);
  return split;
}

Result<DataShape> peek_data_shape(const DataSource& source, const std::string& data_dir) {
  if (auto refused = sparse_inputs_refusal(source)) return *refused;
  if (is_plain_idx(source)) return peek_data_shape(source.name, source.path, data_dir);
  const std::string path = source.path;
  if (path.empty()) return peek_data_shape(source.name, "", data_dir);
  auto format = data_format(path);
  if (!format) return Error{format.error()};
  DataShape shape;
  auto take = [&](const NpyArray& x, std::uint64_t& count) {
    count = x.shape.empty() ? 0 : x.shape[0];
    std::uint64_t width = 1;
    for (std::size_t d = 1; d < x.shape.size(); ++d) width *= x.shape[d];
    shape.width = width;
  };
  switch (*format) {
    case DataFormat::idx_folder: return peek_data_shape("", path, data_dir);
    case DataFormat::npy_folder: {
      auto train = read_npy_header((fs::path(path) / "x_train.npy").string());
      if (!train) return Error{train.error()};
      take(*train, shape.train_count);
      break;
    }
    case DataFormat::npz_file: {
      auto archive = NpzArchive::open(path);
      if (!archive) return Error{archive.error()};
      auto train = archive->read_header("x_train");
      if (!train) return Error{train.error()};
      take(*train, shape.train_count);
      break;
    }
    case DataFormat::csv_file: {
      auto csv = peek_csv_shape(path);
      if (!csv) return Error{csv.error()};
      shape.width = csv->columns > 1 ? csv->columns - 1 : 1;
      shape.train_count = csv->data_lines;
      break;
    }
  }
  return shape;
}

}  // namespace psgrad
