// A reader of TensorBoard event files written from the format's description alone, sharing no code
// with io/tensorboard_events.cpp: a bit-at-a-time CRC-32C, TFRecord frames checked field by field, and
// the Event, Summary and Value protobufs decoded by hand. Any disagreement with the writer fails a check.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace psgrad::testing {

inline std::uint32_t bitwise_crc32c(const std::string& bytes) {
  std::uint32_t crc = 0xffffffffu;
  for (unsigned char byte : bytes) {
    crc ^= byte;
    for (int bit = 0; bit < 8; ++bit) crc = (crc & 1u) ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  return ~crc;
}

inline std::uint32_t tensorflow_mask(std::uint32_t crc) { return ((crc >> 15) | (crc << 17)) + 0xa282ead8u; }

inline std::uint64_t little_endian(const std::string& bytes, std::size_t at, int width) {
  std::uint64_t value = 0;
  for (int k = width - 1; k >= 0; --k) value = (value << 8) | static_cast<unsigned char>(bytes[at + k]);
  return value;
}

struct ReadValue {
  std::string tag;
  float simple_value = 0;
};

struct ReadEvent {
  double wall_time = 0;
  std::int64_t step = 0;
  std::string file_version;
  std::vector<ReadValue> values;
};

struct ReadEvents {
  std::vector<ReadEvent> events;
  std::string problem;  // empty when every frame, CRC and field read back
};

// A protobuf message's fields, one at a time.
class FieldCursor {
 public:
  explicit FieldCursor(const std::string& bytes) : bytes_(bytes) {}
  bool done() const { return at_ >= bytes_.size(); }
  bool failed() const { return failed_; }

  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (at_ >= bytes_.size()) return fail();
      const auto byte = static_cast<unsigned char>(bytes_[at_++]);
      value |= static_cast<std::uint64_t>(byte & 0x7f) << shift;
      if (!(byte & 0x80)) return value;
    }
    return fail();
  }
  std::uint64_t fixed(int width) {
    if (at_ + width > bytes_.size()) return fail();
    const auto value = little_endian(bytes_, at_, width);
    at_ += width;
    return value;
  }
  std::string length_delimited() {
    const auto size = varint();
    if (failed_ || at_ + size > bytes_.size()) return fail(), std::string();
    std::string value = bytes_.substr(at_, size);
    at_ += size;
    return value;
  }

 private:
  std::uint64_t fail() {
    failed_ = true;
    at_ = bytes_.size();
    return 0;
  }
  const std::string& bytes_;
  std::size_t at_ = 0;
  bool failed_ = false;
};

inline std::optional<ReadValue> decode_value(const std::string& bytes) {
  ReadValue value;
  FieldCursor cursor(bytes);
  while (!cursor.done()) {
    const auto key = cursor.varint();
    if (key == ((1 << 3) | 2)) value.tag = cursor.length_delimited();
    else if (key == ((2 << 3) | 5)) {
      const auto bits = static_cast<std::uint32_t>(cursor.fixed(4));
      std::memcpy(&value.simple_value, &bits, 4);
    } else return std::nullopt;  // the writer has no other fields
  }
  if (cursor.failed()) return std::nullopt;
  return value;
}

inline std::optional<ReadEvent> decode_event(const std::string& bytes) {
  ReadEvent event;
  FieldCursor cursor(bytes);
  while (!cursor.done()) {
    const auto key = cursor.varint();
    if (key == ((1 << 3) | 1)) {
      const auto bits = cursor.fixed(8);
      std::memcpy(&event.wall_time, &bits, 8);
    } else if (key == ((2 << 3) | 0)) {
      event.step = static_cast<std::int64_t>(cursor.varint());
    } else if (key == ((3 << 3) | 2)) {
      event.file_version = cursor.length_delimited();
    } else if (key == ((5 << 3) | 2)) {
      const auto summary = cursor.length_delimited();
      FieldCursor values(summary);
      while (!values.done()) {
        if (values.varint() != ((1 << 3) | 2)) return std::nullopt;
        auto value = decode_value(values.length_delimited());
        if (!value || values.failed()) return std::nullopt;
        event.values.push_back(*value);
      }
    } else {
      return std::nullopt;
    }
  }
  if (cursor.failed()) return std::nullopt;
  return event;
}

inline ReadEvents read_event_records(const std::string& bytes) {
  ReadEvents read;
  std::size_t at = 0;
  while (at < bytes.size()) {
    if (at + 12 > bytes.size()) return read.problem = "a frame header is cut off", read;
    const std::string length_bytes = bytes.substr(at, 8);
    const auto length = little_endian(bytes, at, 8);
    if (little_endian(bytes, at + 8, 4) != tensorflow_mask(bitwise_crc32c(length_bytes)))
      return read.problem = "a length's CRC does not match", read;
    at += 12;
    if (at + length + 4 > bytes.size()) return read.problem = "a record is cut off", read;
    const std::string data = bytes.substr(at, length);
    if (little_endian(bytes, at + length, 4) != tensorflow_mask(bitwise_crc32c(data)))
      return read.problem = "a record's data CRC does not match", read;
    at += length + 4;
    auto event = decode_event(data);
    if (!event) return read.problem = "a record is not an Event of the expected fields", read;
    read.events.push_back(*event);
  }
  return read;
}

}  // namespace psgrad::testing
