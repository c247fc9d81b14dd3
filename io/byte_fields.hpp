// Little-endian fields of psgrad's binary files, written and read byte by byte so a file is the same
// on every machine; a read past the end or of an implausible length is recorded, not thrown.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace psgrad {

class ByteWriter {
 public:
  void u32(std::uint32_t x) { little_endian(x, 4); }
  void u64(std::uint64_t x) { little_endian(x, 8); }
  void text(const std::string& s) {
    u64(s.size());
    bytes_ += s;
  }
  void raw(const char* data, std::size_t size) { bytes_.append(data, size); }
  void f32(float x) {
    std::uint32_t bits;
    std::memcpy(&bits, &x, 4);
    u32(bits);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  void little_endian(std::uint64_t x, int size) {
    for (int i = 0; i < size; ++i) bytes_.push_back(static_cast<char>((x >> (8 * i)) & 0xff));
  }
  std::string bytes_;
};

// Reads fields in order; the first read past the end records what was being read, so the caller
// can name it, and every later read is a no-op.
class ByteReader {
 public:
  // Lengths above these bounds are a corrupt field, not real contents.
  ByteReader(const std::string& bytes, std::uint64_t max_string_bytes, std::uint64_t max_floats)
      : bytes_(bytes), max_string_bytes_(max_string_bytes), max_floats_(max_floats) {}

  std::uint64_t u64(const char* what) { return little_endian(8, what); }
  std::uint32_t u32(const char* what) { return static_cast<std::uint32_t>(little_endian(4, what)); }
  std::string text(const char* what) {
    const auto size = u64(what);
    if (failed()) return {};
    if (size > max_string_bytes_) {
      corrupt_ = fmt::format("{} length {} is implausible", what, size);
      return {};
    }
    if (!take(size, what)) return {};
    return bytes_.substr(offset_ - size, size);
  }
  bool floats(std::vector<float>& out, std::uint64_t count, const char* what) {
    if (count > max_floats_) {
      corrupt_ = fmt::format("{}: count {} is implausible", what, count);
      return false;
    }
    if (count > (bytes_.size() - offset_) / 4) {
      truncated_ = fmt::format("{} ({} floats) need {} bytes at offset {}, but the file has {} bytes", what,
                               count, count * 4, offset_, bytes_.size());
      return false;
    }
    out.resize(count);
    for (auto& x : out) {
      const auto bits = u32(what);
      std::memcpy(&x, &bits, 4);
    }
    return true;
  }

  void skip(std::uint64_t size, const char* what) { take(size, what); }

  bool failed() const { return !truncated_.empty() || !corrupt_.empty(); }
  const std::string& truncated() const { return truncated_; }
  const std::string& corrupt() const { return corrupt_; }
  std::size_t offset() const { return offset_; }

 private:
  bool take(std::uint64_t size, const char* what) {
    if (failed()) return false;
    if (size > bytes_.size() - offset_) {
      truncated_ = fmt::format("{} needs {} bytes at offset {}, but the file has {} bytes", what, size,
                               offset_, bytes_.size());
      return false;
    }
    offset_ += size;
    return true;
  }
  std::uint64_t little_endian(int size, const char* what) {
    if (!take(static_cast<std::uint64_t>(size), what)) return 0;
    std::uint64_t x = 0;
    for (int i = 0; i < size; ++i)
      x |= std::uint64_t{static_cast<unsigned char>(bytes_[offset_ - size + i])} << (8 * i);
    return x;
  }

  const std::string& bytes_;
  std::uint64_t max_string_bytes_;
  std::uint64_t max_floats_;
  std::size_t offset_ = 0;
  std::string truncated_;
  std::string corrupt_;
};

}  // namespace psgrad
