// The format: magic, version, the dense checkpoint's bytes (io/checkpoint_file.cpp, with their own
// checksum), the row optimizer's name, the shards' sections (each magic, version, fields, checksum), and
// an FNV-1a checksum of every byte before it. Host byte order, counts before arrays.
#include "io/sparse_checkpoint_file.hpp"

#include <cstring>
#include <fstream>

#include <fmt/format.h>

#include "io/atomic_file.hpp"
#include "io/bounded_file.hpp"
#include "io/host_order_record.hpp"
#include "io/checkpoint_file.hpp"
#include "model/fnv1a.hpp"

namespace psgrad {

namespace {

constexpr char file_magic[8] = {'P', 'S', 'G', 'R', 'S', 'P', 'C', 'K'};
constexpr char shard_magic[8] = {'P', 'S', 'G', 'R', 'T', 'B', 'L', 'S'};
constexpr std::uint32_t format_version = 1;
// Bounds on what a file may declare: 2^33 values an array (keys, or floats of rows or state), 2^16
// shards and tables; the file's size is bounded by the memory it would take (read_checked_file).
constexpr std::uint64_t max_values = std::uint64_t{1} << 33;
constexpr std::uint64_t max_parts = std::uint64_t{1} << 16;
constexpr std::uint64_t max_file_bytes = std::uint64_t{1} << 40;
constexpr std::size_t checksum_bytes = sizeof(std::uint64_t);

void seal(HostOrderWriter& out) { out.number(fnv1a(out.data().data(), out.data().size())); }

// The bytes before a valid checksum, or why there is none.
Result<std::string_view> checked_body(std::string_view whole, const char (&magic)[8], const std::string& where,
                                      const char* what) {
  if (whole.size() < sizeof magic || std::memcmp(whole.data(), magic, sizeof magic) != 0)
    return Error{fmt::format("{}: not a psgrad {} (wrong magic)", where, what)};
  std::uint32_t version = 0;
  if (whole.size() < sizeof magic + sizeof version + checksum_bytes)
    return Error{fmt::format("{}: {} is truncated or corrupt", where, what)};
  std::memcpy(&version, whole.data() + sizeof magic, sizeof version);
  if (version != format_version)
    return Error{fmt::format("{}: {} format version {} is not supported (expected {})", where, what, version,
                             format_version)};
  const std::string_view body(whole.data(), whole.size() - checksum_bytes);
  std::uint64_t stored = 0;
  std::memcpy(&stored, whole.data() + body.size(), checksum_bytes);
  if (stored != fnv1a(body.data(), body.size()))
    return Error{fmt::format("{}: {} is truncated or corrupt: checksum mismatch", where, what)};
  return body.substr(sizeof magic + sizeof version);
}

}  // namespace

std::string encode_shard_tables(const ShardTablesState& shard) {
  HostOrderWriter out;
  out.raw(shard_magic, sizeof shard_magic);
  out.number(format_version);
  out.number(shard.index);
  out.number(shard.count);
  out.number(shard.version);
  out.number<std::uint64_t>(shard.tables.size());
  for (const auto& table : shard.tables) {
    out.number(table.width);
    out.number(table.state_width);
    out.array(table.keys);
    out.array(table.rows);
    out.array(table.state);
    out.array(table.steps);
  }
  seal(out);
  return std::string(out.view());
}

Result<ShardTablesState> decode_shard_tables(std::string_view bytes, const std::string& where) {
  auto body = checked_body(bytes, shard_magic, where, "table shard section");
  if (!body) return Error{body.error()};
  HostOrderReader in(*body, max_values);
  ShardTablesState shard;
  std::uint64_t tables = 0;
  const auto truncated = Error{fmt::format("{}: table shard section is truncated or corrupt", where)};
  if (!in.number(shard.index) || !in.number(shard.count) || !in.number(shard.version) || !in.number(tables) ||
      tables > max_parts)
    return truncated;
  shard.tables.resize(tables);
  for (auto& table : shard.tables)
    if (!in.number(table.width) || !in.number(table.state_width) || !in.array(table.keys) || !in.array(table.rows) ||
        !in.array(table.state) || !in.array(table.steps))
      return truncated;
  if (!in.at_end()) return Error{fmt::format("{}: table shard section has trailing bytes", where)};
  if (shard.count == 0 || shard.index >= shard.count)
    return Error{fmt::format("{}: shard {} of {}", where, shard.index, shard.count)};
  for (std::size_t t = 0; t < shard.tables.size(); ++t)
    if (auto problem = table_state_problem(shard.tables[t])) return Error{fmt::format("{}, table {}: {}", where, t, *problem)};
  return shard;
}

Status write_sparse_checkpoint(const std::string& path, const SparseCheckpoint& checkpoint) {
  HostOrderWriter out;
  out.raw(file_magic, sizeof file_magic);
  out.number(format_version);
  out.text(encode_checkpoint(checkpoint.dense));
  out.text(checkpoint.row_optimizer);
  out.number<std::uint64_t>(checkpoint.shards.size());
  for (const auto& shard : checkpoint.shards) out.text(encode_shard_tables(shard));
  seal(out);
  return write_file_atomically(path, "sparse checkpoint", out.view());
}

Result<SparseCheckpoint> read_sparse_checkpoint(const std::string& path) {
  auto file = read_checked_file(path, "sparse checkpoint", max_file_bytes);
  if (!file) return Error{file.error()};
  if (file->compare(0, 8, "PSGRCKPT") == 0)
    return Error{fmt::format("{}: a dense model's checkpoint, not a sparse run's: resume it with a config naming a "
                             "dense model",
                             path)};
  auto body = checked_body(*file, file_magic, path, "sparse checkpoint");
  if (!body) return Error{body.error()};
  HostOrderReader in(*body, max_values);
  const auto truncated = Error{fmt::format("{}: sparse checkpoint is truncated or corrupt", path)};
  std::uint64_t dense_size = 0, shards = 0;
  std::string_view dense_bytes;
  SparseCheckpoint checkpoint;
  if (!in.number(dense_size) || !in.bytes(dense_bytes, dense_size)) return truncated;
  auto dense = decode_checkpoint(dense_bytes, path + ": dense part");
  if (!dense) return Error{dense.error()};
  checkpoint.dense = std::move(dense).value();
  if (!in.text(checkpoint.row_optimizer) || !in.number(shards) || shards == 0 || shards > max_parts) return truncated;
  for (std::uint64_t s = 0; s < shards; ++s) {
    std::uint64_t size = 0;
    std::string_view section;
    if (!in.number(size) || !in.bytes(section, size)) return truncated;
    auto shard = decode_shard_tables(section, fmt::format("{}: table shard {}", path, s));
    if (!shard) return Error{shard.error()};
    checkpoint.shards.push_back(std::move(shard).value());
  }
  if (!in.at_end()) return Error{fmt::format("{}: sparse checkpoint has trailing bytes", path)};
  if (auto problem = shard_parts_problem(checkpoint)) return Error{fmt::format("{}: {}", path, *problem)};
  return checkpoint;
}

bool is_sparse_checkpoint(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  char magic[sizeof file_magic] = {};
  return file.read(magic, sizeof magic) && std::memcmp(magic, file_magic, sizeof magic) == 0;
}

}  // namespace psgrad
