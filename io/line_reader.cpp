#include "io/line_reader.hpp"

#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>
#include <unistd.h>

#include "io/machine_memory.hpp"

namespace psgrad {

namespace {
// Large enough that a read costs little next to parsing what it brought.
constexpr std::size_t kReadBytes = std::size_t{1} << 20;
}  // namespace

LineReader::LineReader(CheckedFile file, std::string path, std::string what, std::size_t max_line_bytes,
                       std::string line_meaning)
    : file_(std::move(file)),
      path_(std::move(path)),
      what_(std::move(what)),
      line_meaning_(std::move(line_meaning)),
      max_line_bytes_(max_line_bytes) {}

Result<LineReader> LineReader::open(const std::string& path, const std::string& what, std::uint64_t max_bytes,
                                    std::size_t max_line_bytes, std::string line_meaning) {
  auto file = open_checked_file(path, what, max_bytes);
  if (!file) return Error{file.error()};
  LineReader reader(std::move(file).value(), path, what, max_line_bytes, std::move(line_meaning));
  reader.max_bytes_ = max_bytes;
  return reader;
}

Result<bool> LineReader::fill() {
  if (at_end_) return false;
  const std::size_t kept = buffer_.size();
  buffer_.resize(kept + kReadBytes);
  for (;;) {
    const auto got = ::read(file_.fd(), buffer_.data() + kept, kReadBytes);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      buffer_.resize(kept);
      return Error{fmt::format("{}: cannot read {}: {}", path_, what_, std::strerror(errno))};
    }
    buffer_.resize(kept + static_cast<std::size_t>(got));
    read_ += static_cast<std::uint64_t>(got);
    if (read_ > max_bytes_)
      return Error{fmt::format("{}: grew past {} while being read, more than any {}", path_,
                               memory_size_text(static_cast<double>(max_bytes_)), what_)};
    at_end_ = got == 0;
    return got > 0;
  }
}

Result<std::optional<std::string_view>> LineReader::next() {
  std::size_t searched = begin_;
  for (;;) {
    const auto newline = buffer_.find('\n', searched);
    if (newline != std::string::npos) {
      // Every line is held to the limit, also one that arrived whole inside a read.
      if (newline - begin_ > max_line_bytes_)
        return Error{fmt::format("{}:{}: line is longer than {} bytes, {}", path_, line_ + 1, max_line_bytes_,
                                 line_meaning_)};
      const std::string_view line(buffer_.data() + begin_, newline + 1 - begin_);
      begin_ = newline + 1;
      ++line_;
      return std::optional<std::string_view>(line);
    }
    if (buffer_.size() - begin_ > max_line_bytes_)
      return Error{fmt::format("{}:{}: line is longer than {} bytes, {}", path_, line_ + 1, max_line_bytes_,
                               line_meaning_)};
    // Keep only the unfinished line before reading more.
    buffer_.erase(0, begin_);
    begin_ = 0;
    searched = buffer_.size();
    auto more = fill();
    if (!more) return Error{more.error()};
    if (!*more) {
      if (buffer_.empty()) return std::optional<std::string_view>{};
      if (buffer_.size() > max_line_bytes_)
        return Error{fmt::format("{}:{}: line is longer than {} bytes, {}", path_, line_ + 1, max_line_bytes_,
                                 line_meaning_)};
      const std::string_view line(buffer_.data(), buffer_.size());
      begin_ = buffer_.size();
      ++line_;
      return std::optional<std::string_view>(line);
    }
  }
}

}  // namespace psgrad
