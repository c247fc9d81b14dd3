// lz4 frames through liblz4's LZ4F streaming decoder, which keeps its own window: input and output
// buffers stay a fixed size whatever the file's.
#include "io/lz4_file.hpp"

#include <lz4frame.h>

#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <unistd.h>

#include "io/bounded_file.hpp"
#include "io/machine_memory.hpp"

namespace psgrad {

namespace {

constexpr std::size_t kReadBytes = std::size_t{1} << 20;
constexpr std::size_t kOutputBytes = std::size_t{4} << 20;
constexpr unsigned char kLz4Magic[4] = {0x04, 0x22, 0x4d, 0x18};  // 0x184D2204, little-endian

struct ContextFreer {
  void operator()(LZ4F_dctx* context) const { LZ4F_freeDecompressionContext(context); }
};

// Reads up to `size` bytes; 0 at the end of the file.
Result<std::size_t> read_some(int fd, char* into, std::size_t size, const std::string& path, const std::string& what) {
  for (;;) {
    const auto got = ::read(fd, into, size);
    if (got >= 0) return static_cast<std::size_t>(got);
    if (errno != EINTR) return Error{fmt::format("{}: cannot read {}: {}", path, what, std::strerror(errno))};
  }
}

Error too_large(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  return Error{fmt::format("{}: holds more than {}, more than any {}", path,
                           memory_size_text(static_cast<double>(max_bytes)), what)};
}

}  // namespace

bool starts_lz4_frame(std::string_view bytes) {
  return bytes.size() >= 4 && std::memcmp(bytes.data(), kLz4Magic, 4) == 0;
}

Status read_lz4_or_plain(const std::string& path, const std::string& what, std::uint64_t max_file_bytes,
                         std::uint64_t max_bytes, const std::function<Status(std::string_view)>& take) {
  auto file = open_checked_file(path, what, max_file_bytes);
  if (!file) return Error{file.error()};
  std::string input(kReadBytes, '\0');
  auto first = read_some(file->fd(), input.data(), input.size(), path, what);
  if (!first) return Error{first.error()};
  std::size_t filled = *first;
  std::uint64_t read_total = filled;
  std::uint64_t given = 0;
  if (!starts_lz4_frame(std::string_view(input.data(), filled))) {
    while (filled > 0) {
      given += filled;
      if (given > max_bytes || read_total > max_file_bytes) return too_large(path, what, max_bytes);
      if (auto taken = take(std::string_view(input.data(), filled)); !taken) return taken;
      auto more = read_some(file->fd(), input.data(), input.size(), path, what);
      if (!more) return Error{more.error()};
      filled = *more;
      read_total += filled;
    }
    return success();
  }
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION)))
    return Error{fmt::format("{}: cannot start the lz4 decoder", path)};
  std::unique_ptr<LZ4F_dctx, ContextFreer> context(raw);
  std::string output(kOutputBytes, '\0');
  std::size_t hint = 1;  // nonzero while a frame is unfinished
  while (filled > 0) {
    std::size_t at = 0;
    while (at < filled) {
      std::size_t output_size = output.size();
      std::size_t input_size = filled - at;
      hint = LZ4F_decompress(context.get(), output.data(), &output_size, input.data() + at, &input_size, nullptr);
      if (LZ4F_isError(hint))
        return Error{fmt::format("{}: not a valid lz4 file: {}", path, LZ4F_getErrorName(hint))};
      at += input_size;
      given += output_size;
      if (given > max_bytes) return too_large(path, what, max_bytes);
      if (output_size > 0)
        if (auto taken = take(std::string_view(output.data(), output_size)); !taken) return taken;
    }
    auto more = read_some(file->fd(), input.data(), input.size(), path, what);
    if (!more) return Error{more.error()};
    filled = *more;
    read_total += filled;
    if (read_total > max_file_bytes) return too_large(path, what, max_file_bytes);
  }
  // The decoder may still hold output of the last input it took: then its frame is not done yet.
  while (hint != 0) {
    std::size_t output_size = output.size();
    std::size_t input_size = 0;
    hint = LZ4F_decompress(context.get(), output.data(), &output_size, nullptr, &input_size, nullptr);
    if (LZ4F_isError(hint)) return Error{fmt::format("{}: not a valid lz4 file: {}", path, LZ4F_getErrorName(hint))};
    if (output_size == 0) break;
    given += output_size;
    if (given > max_bytes) return too_large(path, what, max_bytes);
    if (auto taken = take(std::string_view(output.data(), output_size)); !taken) return taken;
  }
  if (hint != 0) return Error{fmt::format("{}: the lz4 data ends inside a frame (a cut file?)", path)};
  return success();
}

}  // namespace psgrad
