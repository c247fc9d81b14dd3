// The checkpoint format: fields in a fixed order, host byte order, behind a magic and a version and
// followed by an FNV-1a checksum of every byte before it.
#include "io/checkpoint_file.hpp"

#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "io/atomic_file.hpp"
#include "io/bounded_file.hpp"
#include "io/host_order_record.hpp"
#include "model/fnv1a.hpp"

namespace psgrad {

namespace {

constexpr char magic[8] = {'P', 'S', 'G', 'R', 'C', 'K', 'P', 'T'};
// Version 2 added the checksum; version 1 files cannot be told from corrupt ones and are refused.
// Version 3 added the training data's fingerprint after the workers; version 2 files still load,
// without one.
constexpr std::uint32_t format_version = 3;
constexpr std::uint32_t oldest_version = 2;
// Bounds on what a file may declare, so a corrupt count cannot ask for absurd memory.
constexpr std::uint64_t max_floats = std::uint64_t{1} << 30;
constexpr std::uint64_t max_items = std::uint64_t{1} << 20;
// The largest file those bounds allow: weights and optimizer buffers, a generous config, the counts
// and every worker's stream, and the fixed fields.
constexpr std::uint64_t max_file_bytes = 2 * max_floats * sizeof(float) + (std::uint64_t{64} << 20) +
                                         max_items * (sizeof(std::uint64_t) + 128) + 4096;
constexpr std::size_t checksum_bytes = sizeof(std::uint64_t);

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
  out.number(fnv1a(out.data().data(), out.data().size()));
  return std::string(out.view());
}

Status write_checkpoint(const std::string& path, const TrainingCheckpoint& checkpoint) {
  return write_file_atomically(path, "checkpoint", encode_checkpoint(checkpoint));
}

Result<TrainingCheckpoint> read_checkpoint(const std::string& path) {
  auto file = read_checked_file(path, "checkpoint", max_file_bytes);
  if (!file) return Error{file.error()};
  return decode_checkpoint(*file, path);
}

Result<TrainingCheckpoint> decode_checkpoint(std::string_view whole, const std::string& path) {
  HostOrderReader header(whole, max_floats);
  char found_magic[sizeof magic] = {};
  if (!header.raw(found_magic, sizeof magic) || std::memcmp(found_magic, magic, sizeof magic) != 0)
    return Error{fmt::format("{}: not a psgrad checkpoint (wrong magic)", path)};
  std::uint32_t version = 0;
  if (!header.number(version) || version < oldest_version || version > format_version)
    return Error{fmt::format("{}: checkpoint format version {} is not supported (expected {} or {}{})", path,
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
  if (!in.at_end()) return Error{fmt::format("{}: checkpoint has trailing bytes", path)};
  return checkpoint;
}

}  // namespace psgrad
