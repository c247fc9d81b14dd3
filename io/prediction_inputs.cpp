// Telling a prediction input's format from its first bytes, and reading it without needing labels.
#include "io/prediction_inputs.hpp"

#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <unistd.h>

#include "io/bounded_file.hpp"
#include "io/csv_examples.hpp"
#include "io/idx.hpp"
#include "io/model_scoring.hpp"
#include "io/npz_archive.hpp"
#include "model/checked_count.hpp"

namespace psgrad {
namespace {

std::string first_bytes(const std::string& path) {
  auto file = open_checked_file(path, "input file", kMaxCsvBytes);
  if (!file) return {};
  std::string bytes(6, '\0');
  const auto got = ::read(file->fd(), bytes.data(), bytes.size());
  bytes.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return bytes;
}

bool starts_with(const std::string& bytes, const std::string& prefix) { return bytes.compare(0, prefix.size(), prefix) == 0; }

Result<LabeledExamples> idx_images(const std::string& path) {
  auto images = read_idx_images(path);
  if (!images) return Error{images.error()};
  LabeledExamples examples;
  examples.count = images->count;
  examples.width = images->rows * images->cols;
  examples.image_rows = images->rows;
  examples.image_cols = images->cols;
  examples.inputs = scaled_pixels(*images);
  examples.origin = path;
  return examples;
}

Result<LabeledExamples> csv_rows(const std::string& path, std::size_t width, const DataSource& source) {
  auto shape = peek_csv_shape(path);
  if (!shape) return Error{shape.error()};
  std::optional<std::int64_t> label_column;
  if (shape->columns == width + 1) label_column = source.label_column;
  else if (shape->columns != width)
    return Error{fmt::format("{}: rows of {} columns, but the model takes {} inputs: give {} feature columns, or {} "
                             "with the label in column {} (data.label_column)",
                             path, shape->columns, width, width, width + 1, source.label_column)};
  return read_csv_examples(path, CsvLayout{label_column, source.scale});
}

// An array of examples holds its features in every axis but the first.
Status check_feature_count(const NpyArray& header, const std::string& where, std::size_t width) {
  if (header.shape.size() < 2) return success();  // features_from_array says what is wrong with it
  std::uint64_t features = 1;
  for (std::size_t axis = 1; axis < header.shape.size(); ++axis)
    features = saturating_product(features, header.shape[axis]);
  if (features == width) return success();
  return Error{fmt::format("{}: {} features per example (shape {}), but the model takes {} inputs", where, features,
                           fmt::join(header.shape, "x"), width)};
}

}  // namespace

Result<LabeledExamples> read_prediction_inputs(const std::string& path, std::size_t width, const DataSource& source) {
  if (auto missing = missing_path(path)) return *missing;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(status)) return load_dev_examples(path, source);
  // Said for what it is, before a reader guesses at its format from no bytes at all.
  if (auto opened = open_checked_file(path, "input file", kMaxCsvBytes); !opened) return Error{opened.error()};
  else if (opened->size() == 0) return Error{fmt::format("{}: is empty (0 bytes), expected examples", path)};
  const std::string bytes = first_bytes(path);
  if (starts_with(bytes, "PK\x03\x04")) {
    auto archive = NpzArchive::open(path);
    if (!archive) return Error{archive.error()};
    const std::string name = archive->has("x_test") ? "x_test" : "x_train";
    // The header's shape is checked before the array is inflated.
    auto header = archive->read_header(name);
    if (!header) return Error{header.error()};
    if (auto fits = check_feature_count(*header, fmt::format("{}: {}", path, name), width); !fits)
      return Error{fits.error()};
    auto x = archive->read(name);
    if (!x) return Error{x.error()};
    return features_from_array(*x, fmt::format("{}: {}", path, name), source.scale);
  }
  if (starts_with(bytes, "\x93NUMPY")) {
    auto header = read_npy_header(path);
    if (!header) return Error{header.error()};
    if (auto fits = check_feature_count(*header, path, width); !fits) return Error{fits.error()};
    auto x = read_npy_file(path);
    if (!x) return Error{x.error()};
    return features_from_array(*x, path, source.scale);
  }
  // IDX images start with the magic 0x00000803; gzip with 0x1f 0x8b. An unreadable file goes to the IDX
  // reader too, which says why it cannot be read.
  if (bytes.empty() || starts_with(bytes, std::string("\0\0\x08\x03", 4)) || starts_with(bytes, "\x1f\x8b") ||
      bytes[0] == '\0')
    return idx_images(path);
  return csv_rows(path, width, source);
}

}  // namespace psgrad
