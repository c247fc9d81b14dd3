// Reads and writes model.psgrad files byte by byte, so the format is the same on every machine: the
// dense layout, and the tables layout for a model with embedding tables.
#include "io/model_file.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "io/atomic_file.hpp"
#include "io/bounded_file.hpp"
#include "io/byte_fields.hpp"
#include "model/fnv1a.hpp"

namespace psgrad {

namespace {

// Strings longer than this are a corrupt length field, not a real config.
constexpr std::uint64_t kMaxStringBytes = std::uint64_t{1} << 26;
constexpr std::uint64_t kMaxWeights = kMaxStringBytes * 64;
// The largest file those bounds allow: three strings, the weights and the fixed fields.
constexpr std::uint64_t kMaxModelFileBytes = 3 * (kMaxStringBytes + 8) + kMaxWeights * 4 + 4096;

// The tables layout: a file holds at most this many floats in one array (dense weights or one table's
// rows: 16 GiB), and this many columns, classes, tables or keys of a table.
constexpr std::uint64_t kMaxTableFloats = std::uint64_t{1} << 32;
constexpr std::uint64_t kMaxTablesFileBytes = std::uint64_t{1} << 40;
constexpr std::uint64_t kMaxTableCount = std::uint64_t{1} << 32;

std::string encode(const ModelFileHeader& header, const float* weights, std::size_t weight_count) {
  ByteWriter out;
  out.raw(model_file_magic, sizeof model_file_magic);
  out.u32(header.format_version);
  out.u64(header.weights_version);
  out.u64(header.input_width);
  out.u64(header.num_classes);
  out.u64(header.image_rows);
  out.u64(header.image_cols);
  out.text(header.architecture);
  out.text(header.config_text);
  out.text(header.layout_description);
  out.u64(header.layout_hash);
  out.u64(weight_count);
  for (std::size_t i = 0; i < weight_count; ++i) out.f32(weights[i]);
  out.u64(fnv1a(out.bytes().data(), out.bytes().size()));
  return out.bytes();
}

std::string encode_with_tables(const ModelFileContents& contents) {
  const auto& header = contents.header;
  const auto& model = *contents.tables;
  ByteWriter out;
  out.raw(tables_model_file_magic, sizeof tables_model_file_magic);
  out.u32(tables_model_file_format_version);
  out.u64(header.weights_version);
  out.text(header.architecture);
  out.text(header.config_text);
  out.text(model.label);
  out.u64(model.max_tokens);
  out.u64(model.columns.size());
  for (const auto& column : model.columns) {
    out.text(column.name);
    out.u32(static_cast<std::uint32_t>(column.kind));
    out.u64(column.max_id ? 1 : 0);
    out.u64(column.max_id.value_or(0));
  }
  out.u64(model.class_names.size());
  for (const auto& name : model.class_names) out.text(name);
  out.u64(contents.weights.size());
  for (const auto x : contents.weights) out.f32(x);
  out.u64(model.tables.size());
  for (const auto& table : model.tables) {
    out.u64(table.init_seed);
    out.u64(table.rows.width);
    out.u64(table.rows.keys.size());
    for (const auto key : table.rows.keys) out.u64(key);
    for (const auto x : table.rows.values) out.f32(x);
  }
  out.u64(fnv1a(out.bytes().data(), out.bytes().size()));
  return out.bytes();
}

// A count read from the file, refused past `limit` before anything is sized by it.
bool plausible(ByteReader& in, std::uint64_t count, std::uint64_t limit, const char* what, std::string& corrupt) {
  if (in.failed() || count <= limit) return !in.failed();
  corrupt = fmt::format("{} {} is implausible", what, count);
  return false;
}

Result<ModelFileContents> decode_with_tables(const std::string& bytes, const std::string& path) {
  const std::size_t magic_size = sizeof tables_model_file_magic;
  if (bytes.size() < magic_size || std::memcmp(bytes.data(), tables_model_file_magic, magic_size) != 0)
    return Error{fmt::format("{}: not a psgrad model file with embedding tables (expected \"PSGRADSM\")", path)};
  ByteReader in(bytes, kMaxStringBytes, kMaxTableFloats);
  in.skip(magic_size, "magic");
  const auto version = in.u32("format version");
  if (!in.failed() && version != tables_model_file_format_version)
    return Error{fmt::format("{}: unsupported model file format version {}; this psgrad reads version {}", path,
                             version, tables_model_file_format_version)};
  ModelFileContents contents;
  auto& model = contents.tables.emplace();
  std::string corrupt;
  contents.header.weights_version = in.u64("weights version");
  contents.header.architecture = in.text("architecture name");
  contents.header.config_text = in.text("stored config");
  model.label = in.text("label column");
  model.max_tokens = in.u64("max tokens");
  const auto columns = in.u64("column count");
  if (plausible(in, columns, kMaxDataColumns, "column count", corrupt))
    for (std::uint64_t c = 0; c < columns && !in.failed(); ++c) {
      DataColumn column;
      column.name = in.text("column name");
      const auto kind = in.u32("column kind");
      const auto has_max = in.u64("column id bound flag");
      const auto max_id = in.u64("column id bound");
      if (kind > static_cast<std::uint32_t>(ColumnKind::number)) corrupt = fmt::format("column kind {} is unknown", kind);
      column.kind = static_cast<ColumnKind>(kind);
      if (has_max) column.max_id = max_id;
      model.columns.push_back(std::move(column));
    }
  const auto classes = in.u64("class count");
  if (corrupt.empty() && plausible(in, classes, kMaxTableCount, "class count", corrupt))
    for (std::uint64_t c = 0; c < classes && !in.failed(); ++c) model.class_names.push_back(in.text("class name"));
  const auto weights = in.u64("dense weight count");
  if (corrupt.empty() && !in.failed()) in.floats(contents.weights, weights, "the dense weights");
  const auto tables = in.u64("table count");
  if (corrupt.empty() && plausible(in, tables, kMaxDataColumns, "table count", corrupt))
    for (std::uint64_t t = 0; t < tables && !in.failed() && corrupt.empty(); ++t) {
      SavedTable table;
      table.init_seed = in.u64("table seed");
      table.rows.width = in.u64("table width");
      const auto keys = in.u64("table row count");
      if (!plausible(in, keys, kMaxTableCount, "table row count", corrupt)) break;
      if (keys > (bytes.size() - in.offset()) / 8) {
        in.skip(keys * 8, "the table's keys");
        break;
      }
      table.rows.keys.resize(keys);
      for (auto& key : table.rows.keys) key = in.u64("a table key");
      if (!std::is_sorted(table.rows.keys.begin(), table.rows.keys.end()) ||
          std::adjacent_find(table.rows.keys.begin(), table.rows.keys.end()) != table.rows.keys.end())
        corrupt = fmt::format("table {}'s keys are not ascending", t);
      if (table.rows.width > kMaxTableFloats || (keys > 0 && table.rows.width > kMaxTableFloats / keys))
        corrupt = fmt::format("table {}: {} rows of width {} are implausible", t, keys, table.rows.width);
      if (corrupt.empty()) in.floats(table.rows.values, keys * table.rows.width, "the table's rows");
      model.tables.push_back(std::move(table));
    }
  const auto checked_size = in.offset();
  const auto stored_checksum = in.u64("checksum");
  if (!in.truncated().empty()) return Error{fmt::format("{}: truncated model file: {}", path, in.truncated())};
  if (!in.corrupt().empty()) corrupt = in.corrupt();
  if (!corrupt.empty()) return Error{fmt::format("{}: corrupted model file: {}", path, corrupt)};
  if (stored_checksum != fnv1a(bytes.data(), checked_size))
    return Error{fmt::format("{}: corrupted model file: checksum mismatch", path)};
  if (in.offset() != bytes.size())
    return Error{fmt::format("{}: corrupted model file: {} unexpected bytes after the checksum", path,
                             bytes.size() - in.offset())};
  contents.header.num_classes = model.class_names.size();
  return contents;
}

}  // namespace

Status write_model_file(const std::string& path, const ModelFileHeader& header, const float* weights,
                        std::size_t weight_count) {
  if (weight_count > 0 && !weights) return Error{fmt::format("{}: no weights to save", path)};
  return write_file_atomically(path, "model file", encode(header, weights, weight_count));
}

Status write_model_file(const std::string& path, const ModelFileContents& contents) {
  if (contents.tables) return write_file_atomically(path, "model file", encode_with_tables(contents));
  return write_model_file(path, contents.header, contents.weights.data(), contents.weights.size());
}

bool model_file_has_tables(const std::string& path) {
  // Only a regular file is opened here: a FIFO or a device would block or never end, and the reader
  // refuses those in one line.
  std::error_code status_error;
  if (!std::filesystem::is_regular_file(path, status_error)) return false;
  std::ifstream in(path, std::ios::binary);
  char magic[sizeof tables_model_file_magic] = {};
  if (!in.read(magic, sizeof magic)) return false;
  return std::memcmp(magic, tables_model_file_magic, sizeof magic) == 0;
}

Result<ModelFileContents> read_model_file(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) return Error{fmt::format("{}: is a folder, not a model file", path)};
  const bool with_tables = model_file_has_tables(path);
  auto read = read_checked_file(path, "model file", with_tables ? kMaxTablesFileBytes : kMaxModelFileBytes);
  if (!read) return Error{read.error()};
  const std::string& bytes = *read;
  if (with_tables) return decode_with_tables(bytes, path);

  const std::size_t magic_size = sizeof model_file_magic;
  const bool magic_prefix_matches =
      std::memcmp(bytes.data(), model_file_magic, std::min(bytes.size(), magic_size)) == 0;
  if (bytes.empty()) return Error{fmt::format("{}: truncated model file: the file is empty", path)};
  if (!magic_prefix_matches)
    return Error{fmt::format("{}: not a psgrad model file (wrong magic; expected \"PSGRADMF\")", path)};
  if (bytes.size() < magic_size)
    return Error{fmt::format("{}: truncated model file: {} bytes, shorter than the magic", path, bytes.size())};

  ByteReader in(bytes, kMaxStringBytes, kMaxWeights);
  in.skip(magic_size, "magic");
  ModelFileContents contents;
  auto& header = contents.header;
  header.format_version = in.u32("format version");
  if (!in.failed() && header.format_version != model_file_format_version)
    return Error{fmt::format("{}: unsupported model file format version {}; this psgrad reads version {}", path,
                             header.format_version, model_file_format_version)};
  header.weights_version = in.u64("weights version");
  header.input_width = in.u64("input width");
  header.num_classes = in.u64("class count");
  header.image_rows = in.u64("image rows");
  header.image_cols = in.u64("image cols");
  header.architecture = in.text("architecture name");
  header.config_text = in.text("stored config");
  header.layout_description = in.text("layout description");
  header.layout_hash = in.u64("layout hash");
  const auto weight_count = in.u64("weight count");
  if (!in.failed()) in.floats(contents.weights, weight_count, "the weights");
  const auto checked_size = in.offset();
  const auto stored_checksum = in.u64("checksum");
  if (!in.truncated().empty()) return Error{fmt::format("{}: truncated model file: {}", path, in.truncated())};
  if (!in.corrupt().empty()) return Error{fmt::format("{}: corrupted model file: {}", path, in.corrupt())};
  if (stored_checksum != fnv1a(bytes.data(), checked_size))
    return Error{fmt::format("{}: corrupted model file: checksum mismatch", path)};
  if (in.offset() != bytes.size())
    return Error{fmt::format("{}: corrupted model file: {} unexpected bytes after the checksum", path,
                             bytes.size() - in.offset())};
  return contents;
}

}  // namespace psgrad
