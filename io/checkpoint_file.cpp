// The checkpoint format: fields in a fixed order, host byte order, behind a magic and a version and
// followed by an FNV-1a checksum of every byte before it. With tables: another magic and version, the
// dense fields' record (with its own checksum), the row optimizer's name, the shards' sections (each
// magic, version, fields, checksum), and a checksum of every byte before it.
#include "io/checkpoint_file.hpp"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

#include <fmt/format.h>

#include "io/atomic_file.hpp"
#include "io/bounded_file.hpp"
#include "io/host_order_record.hpp"
#include "model/checkpoint_tables.hpp"
#include "model/fnv1a.hpp"

namespace psgrad {

namespace {

constexpr char magic[8] = {'P', 'S', 'G', 'R', 'C', 'K', 'P', 'T'};
// Version 2 added the checksum; version 1 files cannot be told from corrupt ones and are refused.
// Version 3 added the training data's fingerprint after the workers; version 2 files still load,
// without one. Version 4 added the samples and wall time after it; older files load with zeros.
constexpr std::uint32_t format_version = 4;
constexpr std::uint32_t oldest_version = 2;
// Bounds on what a file may declare, so a corrupt count cannot ask for absurd memory.
constexpr std::uint64_t max_floats = std::uint64_t{1} << 30;
constexpr std::uint64_t max_items = std::uint64_t{1} << 20;
// The largest file those bounds allow: weights and optimizer buffers, a generous config, the counts
// and every worker's stream, and the fixed fields.
constexpr std::uint64_t max_file_bytes = 2 * max_floats * sizeof(float) + (std::uint64_t{64} << 20) +
                                         max_items * (sizeof(std::uint64_t) + 128) + 4096;
constexpr std::size_t checksum_bytes = sizeof(std::uint64_t);

// The tables layout. Bounds on what it may declare: 2^33 values an array (keys, or floats of rows or
// state), 2^16 shards and tables; the file's size is bounded by the memory it would take
// (read_checked_file).
constexpr char tables_magic[8] = {'P', 'S', 'G', 'R', 'S', 'P', 'C', 'K'};
constexpr char shard_magic[8] = {'P', 'S', 'G', 'R', 'T', 'B', 'L', 'S'};
constexpr std::uint32_t tables_format_version = 1;
constexpr std::uint64_t max_table_values = std::uint64_t{1} << 33;
constexpr std::uint64_t max_parts = std::uint64_t{1} << 16;
constexpr std::uint64_t max_tables_file_bytes = std::uint64_t{1} << 40;

void seal(HostOrderWriter& out) { out.number(fnv1a(out.data().data(), out.data().size())); }

// The bytes between a tables-layout record's version and its valid checksum, or why there are none.
Result<std::string_view> checked_body(std::string_view whole, const char (&expected)[8], const std::string& where,
                                      const char* what) {
  if (whole.size() < sizeof expected || std::memcmp(whole.data(), expected, sizeof expected) != 0)
    return Error{fmt::format("{}: not a psgrad {} (wrong magic)", where, what)};
  std::uint32_t version = 0;
  if (whole.size() < sizeof expected + sizeof version + checksum_bytes)
    return Error{fmt::format("{}: {} is truncated or corrupt", where, what)};
  std::memcpy(&version, whole.data() + sizeof expected, sizeof version);
  if (version != tables_format_version)
    return Error{fmt::format("{}: {} format version {} is not supported (expected {})", where, what, version,
                             tables_format_version)};
  const std::string_view body(whole.data(), whole.size() - checksum_bytes);
  std::uint64_t stored = 0;
  std::memcpy(&stored, whole.data() + body.size(), checksum_bytes);
  if (stored != fnv1a(body.data(), body.size()))
    return Error{fmt::format("{}: {} is truncated or corrupt: checksum mismatch", where, what)};
  return body.substr(sizeof expected + sizeof version);
}

std::string encode_with_tables(const TrainingCheckpoint& checkpoint) {
  HostOrderWriter out;
  out.raw(tables_magic, sizeof tables_magic);
  out.number(tables_format_version);
  out.text(encode_checkpoint(checkpoint));
  out.text(checkpoint.tables->row_optimizer);
  out.number<std::uint64_t>(checkpoint.tables->shards.size());
  for (const auto& shard : checkpoint.tables->shards) out.text(encode_shard_tables(shard));
  seal(out);
  return std::string(out.view());
}

Result<TrainingCheckpoint> decode_with_tables(std::string_view whole, const std::string& path) {
  auto body = checked_body(whole, tables_magic, path, "checkpoint");
  if (!body) return Error{body.error()};
  HostOrderReader in(*body, max_table_values);
  const auto truncated = Error{fmt::format("{}: checkpoint is truncated or corrupt", path)};
  std::uint64_t dense_size = 0, shards = 0;
  std::string_view dense_bytes;
  if (!in.number(dense_size) || !in.bytes(dense_bytes, dense_size)) return truncated;
  auto checkpoint = decode_checkpoint(dense_bytes, path + ": dense part");
  if (!checkpoint) return checkpoint;
  auto& tables = checkpoint->tables.emplace();
  if (!in.text(tables.row_optimizer) || !in.number(shards) || shards == 0 || shards > max_parts) return truncated;
  for (std::uint64_t s = 0; s < shards; ++s) {
    std::uint64_t size = 0;
    std::string_view section;
    if (!in.number(size) || !in.bytes(section, size)) return truncated;
    auto shard = decode_shard_tables(section, fmt::format("{}: table shard {}", path, s));
    if (!shard) return Error{shard.error()};
    tables.shards.push_back(std::move(shard).value());
  }
  if (!in.at_end()) return Error{fmt::format("{}: checkpoint has trailing bytes", path)};
  if (auto problem = shard_parts_problem(*checkpoint)) return Error{fmt::format("{}: {}", path, *problem)};
  return checkpoint;
}

}  // namespace

std::string encode_checkpoint(const TrainingCheckpoint& checkpoint) {
  HostOrderWriter out;
  out.raw(magic, sizeof magic);
  out.number(format_version);
  out.text(checkpoint.config);
  out.number(checkpoint.iteration);
  out.number(checkpoint.version);
  out.number(checkpoint.layout_hash);
  out.floats(checkpoint.weights);
  out.floats(checkpoint.optimizer.buffers);
  out.number<std::uint64_t>(checkpoint.optimizer.counts.size());
  for (auto count : checkpoint.optimizer.counts) out.number(count);
  out.number<std::uint64_t>(checkpoint.workers.size());
  for (const auto& worker : checkpoint.workers) {
    out.number(worker.worker);
    out.number(worker.data.epoch);
    out.number(worker.data.cursor);
    out.state(worker.data.epoch_rng);
    out.state(worker.dropout);
  }
  out.number<std::uint8_t>(checkpoint.data ? 1 : 0);
  if (const auto& data = checkpoint.data) {
    out.text(data->name);
    out.number(data->count);
    out.number(data->width);
    out.number(data->num_classes);
    out.number(data->images_hash);
    out.number(data->labels_hash);
  }
  out.number(checkpoint.samples);
  out.number(checkpoint.wall_seconds);
  out.number(fnv1a(out.data().data(), out.data().size()));
  return std::string(out.view());
}

Status write_checkpoint(const std::string& path, const TrainingCheckpoint& checkpoint) {
  return write_file_atomically(path, "checkpoint",
                               checkpoint.tables ? encode_with_tables(checkpoint) : encode_checkpoint(checkpoint));
}

Result<TrainingCheckpoint> read_checkpoint(const std::string& path) {
  // The bound on its size is the layout's, told by its first bytes (of a regular file only).
  const bool with_tables = checkpoint_has_tables(path);
  auto file = read_checked_file(path, "checkpoint", with_tables ? max_tables_file_bytes : max_file_bytes);
  if (!file) return Error{file.error()};
  return with_tables ? decode_with_tables(*file, path) : decode_checkpoint(*file, path);
}

bool checkpoint_has_tables(const std::string& path) {
  // Only a regular file is opened: a FIFO would block the read; read_checkpoint says what else it is.
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(path, ignored)) return false;
  std::ifstream file(path, std::ios::binary);
  char found[sizeof tables_magic] = {};
  return file.read(found, sizeof found) && std::memcmp(found, tables_magic, sizeof found) == 0;
}

std::string encode_shard_tables(const ShardTablesState& shard) {
  HostOrderWriter out;
  out.raw(shard_magic, sizeof shard_magic);
  out.number(tables_format_version);
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
  HostOrderReader in(*body, max_table_values);
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
    if (auto problem = table_state_problem(shard.tables[t]))
      return Error{fmt::format("{}, table {}: {}", where, t, *problem)};
  return shard;
}

Result<TrainingCheckpoint> decode_checkpoint(std::string_view whole, const std::string& path) {
  HostOrderReader header(whole, max_floats);
  char found_magic[sizeof magic] = {};
  if (!header.raw(found_magic, sizeof magic) || std::memcmp(found_magic, magic, sizeof magic) != 0)
    return Error{fmt::format("{}: not a psgrad checkpoint (wrong magic)", path)};
  std::uint32_t version = 0;
  if (!header.number(version) || version < oldest_version || version > format_version)
    return Error{fmt::format("{}: checkpoint format version {} is not supported (expected {} to {}{})", path,
                             version, oldest_version, format_version,
                             version == 1 ? "; version 1 had no checksum" : "")};
  // Every field is read only from bytes the checksum vouches for.
  if (whole.size() < sizeof magic + sizeof version + checksum_bytes)
    return Error{fmt::format("{}: checkpoint is truncated or corrupt", path)};
  const std::string_view body(whole.data(), whole.size() - checksum_bytes);
  std::uint64_t stored_checksum = 0;
  std::memcpy(&stored_checksum, whole.data() + body.size(), checksum_bytes);
  if (stored_checksum != fnv1a(body.data(), body.size()))
    return Error{fmt::format("{}: checkpoint is truncated or corrupt: checksum mismatch", path)};
  HostOrderReader in(body, max_floats);
  in.raw(found_magic, sizeof magic);
  in.number(version);
  TrainingCheckpoint checkpoint;
  std::uint64_t count_size = 0, worker_count = 0;
  const auto truncated = Error{fmt::format("{}: checkpoint is truncated or corrupt", path)};
  if (!in.text(checkpoint.config) || !in.number(checkpoint.iteration) || !in.number(checkpoint.version) ||
      !in.number(checkpoint.layout_hash) || !in.floats(checkpoint.weights) ||
      !in.floats(checkpoint.optimizer.buffers) || !in.number(count_size) || count_size > max_items)
    return truncated;
  checkpoint.optimizer.counts.resize(count_size);
  for (auto& count : checkpoint.optimizer.counts)
    if (!in.number(count)) return truncated;
  if (!in.number(worker_count) || worker_count > max_items) return truncated;
  checkpoint.workers.resize(worker_count);
  for (auto& worker : checkpoint.workers)
    if (!in.number(worker.worker) || !in.number(worker.data.epoch) || !in.number(worker.data.cursor) ||
        !in.state(worker.data.epoch_rng) || !in.state(worker.dropout))
      return truncated;
  if (version >= 3) {
    std::uint8_t has_data = 0;
    if (!in.number(has_data) || has_data > 1) return truncated;
    if (has_data == 1) {
      DataFingerprint data;
      if (!in.text(data.name) || !in.number(data.count) || !in.number(data.width) || !in.number(data.num_classes) ||
          !in.number(data.images_hash) || !in.number(data.labels_hash))
        return truncated;
      checkpoint.data = std::move(data);
    }
  }
  if (version >= 4 && (!in.number(checkpoint.samples) || !in.number(checkpoint.wall_seconds))) return truncated;
  if (!in.at_end()) return Error{fmt::format("{}: checkpoint has trailing bytes", path)};
  return checkpoint;
}

}  // namespace psgrad
