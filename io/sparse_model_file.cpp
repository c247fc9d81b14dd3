// Reads and writes model files with embedding tables byte by byte, so the format is the same on every machine.
#include "io/sparse_model_file.hpp"

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

constexpr std::uint64_t kMaxStringBytes = std::uint64_t{1} << 26;
// A file holds at most this many floats in one array (dense weights or one table's rows): 16 GiB.
constexpr std::uint64_t kMaxFloats = std::uint64_t{1} << 32;
constexpr std::uint64_t kMaxFileBytes = std::uint64_t{1} << 40;
constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 32;  // columns, classes, tables, keys of a table

std::string encode(const SparseModelFile& model) {
  ByteWriter out;
  out.raw(sparse_model_file_magic, sizeof sparse_model_file_magic);
  out.u32(sparse_model_file_format_version);
  out.u64(model.weights_version);
  out.text(model.architecture);
  out.text(model.config_text);
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
  out.u64(model.dense_weights.size());
  for (const auto x : model.dense_weights) out.f32(x);
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

}  // namespace

bool is_sparse_model_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[sizeof sparse_model_file_magic] = {};
  if (!in.read(magic, sizeof magic)) return false;
  return std::memcmp(magic, sparse_model_file_magic, sizeof magic) == 0;
}

Status write_sparse_model_file(const std::string& path, const SparseModelFile& model) {
  return write_file_atomically(path, "model file", encode(model));
}

Result<SparseModelFile> read_sparse_model_file(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) return Error{fmt::format("{}: is a folder, not a model file", path)};
  auto read = read_checked_file(path, "model file", kMaxFileBytes);
  if (!read) return Error{read.error()};
  const std::string& bytes = *read;
  const std::size_t magic_size = sizeof sparse_model_file_magic;
  if (bytes.size() < magic_size || std::memcmp(bytes.data(), sparse_model_file_magic, magic_size) != 0)
    return Error{fmt::format("{}: not a psgrad model file with embedding tables (expected \"PSGRADSM\")", path)};
  ByteReader in(bytes, kMaxStringBytes, kMaxFloats);
  in.skip(magic_size, "magic");
  const auto version = in.u32("format version");
  if (!in.failed() && version != sparse_model_file_format_version)
    return Error{fmt::format("{}: unsupported model file format version {}; this psgrad reads version {}", path,
                             version, sparse_model_file_format_version)};
  SparseModelFile model;
  std::string corrupt;
  model.weights_version = in.u64("weights version");
  model.architecture = in.text("architecture name");
  model.config_text = in.text("stored config");
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
  if (corrupt.empty() && plausible(in, classes, kMaxCount, "class count", corrupt))
    for (std::uint64_t c = 0; c < classes && !in.failed(); ++c) model.class_names.push_back(in.text("class name"));
  const auto weights = in.u64("dense weight count");
  if (corrupt.empty() && !in.failed()) in.floats(model.dense_weights, weights, "the dense weights");
  const auto tables = in.u64("table count");
  if (corrupt.empty() && plausible(in, tables, kMaxDataColumns, "table count", corrupt))
    for (std::uint64_t t = 0; t < tables && !in.failed() && corrupt.empty(); ++t) {
      SavedTable table;
      table.init_seed = in.u64("table seed");
      table.rows.width = in.u64("table width");
      const auto keys = in.u64("table row count");
      if (!plausible(in, keys, kMaxCount, "table row count", corrupt)) break;
      if (keys > (bytes.size() - in.offset()) / 8) {
        in.skip(keys * 8, "the table's keys");
        break;
      }
      table.rows.keys.resize(keys);
      for (auto& key : table.rows.keys) key = in.u64("a table key");
      if (!std::is_sorted(table.rows.keys.begin(), table.rows.keys.end()) ||
          std::adjacent_find(table.rows.keys.begin(), table.rows.keys.end()) != table.rows.keys.end())
        corrupt = fmt::format("table {}'s keys are not ascending", t);
      if (table.rows.width > kMaxFloats || (keys > 0 && table.rows.width > kMaxFloats / keys))
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
  return model;
}

}  // namespace psgrad
