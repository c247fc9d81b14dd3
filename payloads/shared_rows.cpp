#include "payloads/shared_rows.hpp"

#include <cstring>
#include <memory>
#include <variant>

#include <fmt/format.h>

#include "payloads/payload_checksum.hpp"
#include "payloads/sparse_messages.hpp"

namespace psgrad {

namespace {

// The slot's layout: a header, then per table its header, its keys and its values (padded to 8 bytes).
constexpr std::uint64_t rows_magic = 0x70735257'6f777331;  // "psRWows1"

struct ListHeader {
  std::uint64_t magic;
  std::uint64_t tables;
};

struct TableHeader {
  std::uint32_t table;
  std::uint32_t reserved;
  std::uint64_t keys;
  std::uint64_t width;
  std::uint64_t values;
};

constexpr std::uint64_t padded(std::uint64_t bytes) { return (bytes + 7) / 8 * 8; }

std::uint64_t layout_bytes(const std::vector<TableRows>& tables) {
  std::uint64_t bytes = sizeof(ListHeader);
  for (const auto& entry : tables)
    bytes += sizeof(TableHeader) + entry.rows.keys.size() * sizeof(std::uint64_t) +
             padded(entry.rows.values.size() * sizeof(float));
  return bytes;
}

// Slots of a few sizes only: a segment holds slots of one size, and each batch's rows differ a little.
std::uint64_t slot_class(std::uint64_t bytes) {
  std::uint64_t size = std::uint64_t{64} << 10;
  while (size < bytes) size *= 2;
  return size;
}

}  // namespace

std::optional<SharedRowsReference> put_rows_in_shared_memory(const std::vector<TableRows>& tables) {
  const auto bytes = layout_bytes(tables);
  if (bytes > max_shared_rows_bytes) return std::nullopt;
  auto slot = reserve_in_shared_memory(slot_class(bytes));
  if (!slot) return std::nullopt;
  auto* at = static_cast<char*>(slot.get());
  const ListHeader list{rows_magic, tables.size()};
  std::memcpy(at, &list, sizeof list);
  at += sizeof list;
  for (const auto& entry : tables) {
    const auto& rows = entry.rows;
    const TableHeader header{entry.table, 0, rows.keys.size(), rows.width, rows.values.size()};
    std::memcpy(at, &header, sizeof header);
    at += sizeof header;
    if (!rows.keys.empty()) std::memcpy(at, rows.keys.data(), rows.keys.size() * sizeof(std::uint64_t));
    at += rows.keys.size() * sizeof(std::uint64_t);
    if (!rows.values.empty()) std::memcpy(at, rows.values.data(), rows.values.size() * sizeof(float));
    at += padded(rows.values.size() * sizeof(float));
  }
  const auto checksum = payload_checksum(slot.get(), bytes);
  auto reference = put_in_shared_memory(slot.get(), bytes);
  if (!reference) return std::nullopt;
  reference->checksum = checksum;
  return SharedRowsReference{*reference, bytes};
}

std::string take_rows_from_shared_memory(const SharedRowsReference& where, std::vector<TableRows>& tables) {
  tables.clear();
  if (where.bytes < sizeof(ListHeader) || where.bytes > max_shared_rows_bytes)
    return fmt::format("shared-memory rows were refused: their reference names {} bytes, where {} to {} fit",
                       where.bytes, sizeof(ListHeader), max_shared_rows_bytes);
  auto held = hold_in_shared_memory(where.slot, where.bytes);
  if (auto* refused = std::get_if<std::string>(&held)) return "shared-memory rows were refused: " + *refused;
  const auto& slot = std::get<std::shared_ptr<const void>>(held);
  if (payload_checksum(slot.get(), where.bytes) != where.slot.checksum)
    return "shared-memory rows failed their checksum (their bytes were changed after their sender wrote them)";
  // Every count is read once, into this process's memory, and checked against the bytes left.
  const auto* at = static_cast<const char*>(slot.get());
  std::uint64_t left = where.bytes;
  const auto malformed = [&tables](const std::string& what) {
    tables.clear();
    return "shared-memory rows were refused: " + what;
  };
  ListHeader list{};
  std::memcpy(&list, at, sizeof list);
  at += sizeof list;
  left -= sizeof list;
  if (list.magic != rows_magic || list.tables > left / sizeof(TableHeader))
    return malformed(fmt::format("their header (magic {:#x}, {} tables) does not fit {} bytes", list.magic,
                                 list.tables, where.bytes));
  tables.resize(list.tables);
  for (auto& entry : tables) {
    TableHeader header{};
    if (left < sizeof header) return malformed("a table's header lies past their end");
    std::memcpy(&header, at, sizeof header);
    at += sizeof header;
    left -= sizeof header;
    if (header.keys > left / sizeof(std::uint64_t))
      return malformed(fmt::format("table {}: {} keys lie past their end", header.table, header.keys));
    const auto key_bytes = header.keys * sizeof(std::uint64_t);
    if (header.values > (left - key_bytes) / sizeof(float))
      return malformed(fmt::format("table {}: {} values lie past their end", header.table, header.values));
    const auto value_bytes = padded(header.values * sizeof(float));
    if (value_bytes > left - key_bytes)
      return malformed(fmt::format("table {}: {} values lie past their end", header.table, header.values));
    entry.table = header.table;
    entry.rows.width = static_cast<std::size_t>(header.width);
    const auto* keys = reinterpret_cast<const std::uint64_t*>(at);
    entry.rows.keys.assign(keys, keys + header.keys);
    const auto* values = reinterpret_cast<const float*>(at + key_bytes);
    entry.rows.values.assign(values, values + header.values);
    at += key_bytes + value_bytes;
    left -= key_bytes + value_bytes;
  }
  if (left != 0) return malformed(fmt::format("{} bytes follow their last table", left));
  return std::string();
}

}  // namespace psgrad
