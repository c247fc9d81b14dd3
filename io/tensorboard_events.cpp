// Encodes Event protobufs by hand: the few fields TensorBoard's scalars need do not justify a protobuf
// dependency, and the wire format of these fields is fixed.
#include "io/tensorboard_events.hpp"

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <unistd.h>

namespace psgrad {

namespace {

// The reflected Castagnoli polynomial.
constexpr std::uint32_t kCastagnoli = 0x82F63B78u;
// TensorFlow's mask, so that a CRC stored inside CRC'd data does not weaken the outer CRC.
constexpr std::uint32_t kMaskDelta = 0xa282ead8u;

std::array<std::uint32_t, 256> crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t byte = 0; byte < 256; ++byte) {
    std::uint32_t crc = byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc >> 1) ^ ((crc & 1u) ? kCastagnoli : 0u);
    table[byte] = crc;
  }
  return table;
}

void append_little_endian(std::string& out, std::uint64_t value, int bytes) {
  for (int k = 0; k < bytes; ++k) out.push_back(static_cast<char>((value >> (8 * k)) & 0xffu));
}

// Protobuf wire types: 0 varint, 1 64-bit, 2 length-delimited, 5 32-bit.
void append_varint(std::string& out, std::uint64_t value) {
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
}

void append_key(std::string& out, int field, int wire_type) {
  append_varint(out, (static_cast<std::uint64_t>(field) << 3) | static_cast<std::uint64_t>(wire_type));
}

void append_double(std::string& out, int field, double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  append_key(out, field, 1);
  append_little_endian(out, bits, 8);
}

void append_float(std::string& out, int field, float value) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  append_key(out, field, 5);
  append_little_endian(out, bits, 4);
}

void append_bytes(std::string& out, int field, const std::string& bytes) {
  append_key(out, field, 2);
  append_varint(out, bytes.size());
  out += bytes;
}

// Event's fields: 1 wall_time (double), 2 step (int64), 3 file_version (string), 5 summary (Summary).
// Summary: 1 value (repeated Value); Value: 1 tag (string), 2 simple_value (float).
enum EventField { kWallTime = 1, kStep = 2, kFileVersion = 3, kSummary = 5 };
enum ValueField { kTag = 1, kSimpleValue = 2 };
constexpr int kSummaryValue = 1;

std::string event_start(double wall_time, std::int64_t step) {
  std::string event;
  append_double(event, kWallTime, wall_time);
  // int64 fields are varints of the two's-complement value; steps are never negative.
  if (step != 0) {
    append_key(event, kStep, 0);
    append_varint(event, static_cast<std::uint64_t>(step));
  }
  return event;
}

std::string host_name() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace

std::uint32_t crc32c(const void* data, std::size_t size) {
  static const auto table = crc_table();
  const auto* bytes = static_cast<const unsigned char*>(data);
  std::uint32_t crc = 0xffffffffu;
  for (std::size_t k = 0; k < size; ++k) crc = table[(crc ^ bytes[k]) & 0xffu] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

std::uint32_t masked_crc32c(const void* data, std::size_t size) {
  const std::uint32_t crc = crc32c(data, size);
  return ((crc >> 15) | (crc << 17)) + kMaskDelta;
}

std::string tfrecord(const std::string& data) {
  std::string length;
  append_little_endian(length, data.size(), 8);
  std::string record = length;
  append_little_endian(record, masked_crc32c(length.data(), length.size()), 4);
  record += data;
  append_little_endian(record, masked_crc32c(data.data(), data.size()), 4);
  return record;
}

std::string file_version_event(double wall_time) {
  auto event = event_start(wall_time, 0);
  append_bytes(event, kFileVersion, "brain.Event:2");
  return event;
}

std::string scalars_event(double wall_time, std::int64_t step, const std::vector<Scalar>& scalars) {
  std::string summary;
  for (const auto& scalar : scalars) {
    std::string value;
    append_bytes(value, kTag, scalar.tag);
    append_float(value, kSimpleValue, scalar.value);
    append_bytes(summary, kSummaryValue, value);
  }
  auto event = event_start(wall_time, step);
  append_bytes(event, kSummary, summary);
  return event;
}

double unix_seconds(std::chrono::system_clock::time_point time) {
  return std::chrono::duration<double>(time.time_since_epoch()).count();
}

Result<std::unique_ptr<EventFile>> EventFile::create_in(const std::string& folder) {
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  if (error) return Error{fmt::format("{}: cannot create the TensorBoard folder: {}", folder, error.message())};
  const auto now = std::chrono::system_clock::now();
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch()).count();
  const auto path =
      (std::filesystem::path(folder) / fmt::format("events.out.tfevents.{}.{}.{}", seconds, host_name(), getpid()))
          .string();
  std::FILE* file = std::fopen(path.c_str(), "wbx");
  if (!file) return Error{fmt::format("{}: cannot create TensorBoard event file: {}", path, std::strerror(errno))};
  auto events = std::make_unique<EventFile>(Key{}, path, file);
  if (auto written = events->write_record(file_version_event(unix_seconds(now))); !written) return Error{written.error()};
  return events;
}

Status EventFile::write_scalars(std::int64_t step, const std::vector<Scalar>& scalars) {
  return write_record(scalars_event(unix_seconds(std::chrono::system_clock::now()), step, scalars));
}

Status EventFile::write_record(const std::string& event) {
  const auto record = tfrecord(event);
  if (std::fwrite(record.data(), 1, record.size(), file_.get()) != record.size() || std::fflush(file_.get()) != 0)
    return Error{fmt::format("{}: writing TensorBoard events failed: {}", path_, std::strerror(errno))};
  return success();
}

}  // namespace psgrad
