// fstat on the opened descriptor, then bounded reads: the one way psgrad's readers open files.
#include "io/bounded_file.hpp"

#include <cerrno>
#include <filesystem>
#include <cstring>
#include <new>
#include <string>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/machine_memory.hpp"

namespace psgrad {

namespace {

Error too_big(const std::string& path, const std::string& what, double size, std::uint64_t max_bytes) {
  return Error{fmt::format("{}: is {}, more than any {} (at most {})", path, memory_size_text(size), what,
                           memory_size_text(static_cast<double>(max_bytes)))};
}

// "a config file", "an IDX file".
std::string with_article(const std::string& what) {
  const bool vowel = !what.empty() && std::string("AEIOUaeiou").find(what.front()) != std::string::npos;
  return (vowel ? "an " : "a ") + what;
}

}  // namespace

const char* file_kind_text(unsigned int mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISFIFO(mode)) return "a FIFO (named pipe)";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::optional<Error> missing_path(const std::string& path) {
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0) return std::nullopt;
  const int error = errno;
  if (error == ENOENT) {
    // A relative path is looked for from the working directory: say where that was.
    std::error_code ignored;
    if (std::filesystem::path(path).is_relative())
      return Error{fmt::format("{}: not found (looked for {})", path,
                               std::filesystem::absolute(path, ignored).lexically_normal().string())};
    return Error{fmt::format("{}: not found", path)};
  }
  if (error == ELOOP) return Error{fmt::format("{}: is a symbolic link loop", path)};
  return Error{fmt::format("{}: {}", path, std::strerror(error))};
}

CheckedFile::~CheckedFile() {
  if (fd_ >= 0) ::close(fd_);
}

Result<CheckedFile> open_checked_file(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer before anything could be checked.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return Error{fmt::format("{}: cannot open {}", path, what)};
    return Error{fmt::format("{}: cannot open {}: {}", path, what, std::strerror(error))};
  }
  CheckedFile file(fd, 0);
  struct stat status {};
  if (::fstat(fd, &status) != 0)
    return Error{fmt::format("{}: cannot open {}: {}", path, what, std::strerror(errno))};
  if (!S_ISREG(status.st_mode))
    return Error{fmt::format("{}: is {}, not {}", path, file_kind_text(status.st_mode), with_article(what))};
  const auto size = static_cast<std::uint64_t>(status.st_size);
  if (size > max_bytes) return too_big(path, what, static_cast<double>(size), max_bytes);
  // Blocking again, for readers that expect it (regular files never block, but zlib asks).
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return CheckedFile(file.release(), size);
}

Result<std::string> read_checked_file(const std::string& path, const std::string& what, std::uint64_t max_bytes) {
  auto file = open_checked_file(path, what, max_bytes);
  if (!file) return Error{file.error()};
  std::string bytes;
  try {
    // One byte more than allowed, to notice a file that grew since it was checked.
    bytes.resize(static_cast<std::size_t>(file->size()) + 1);
    std::size_t filled = 0;
    for (;;) {
      if (filled == bytes.size()) {
        if (bytes.size() > max_bytes) return too_big(path, what, static_cast<double>(filled), max_bytes);
        bytes.resize(std::min<std::uint64_t>(max_bytes + 1, bytes.size() * 2));
      }
      const auto got = ::read(file->fd(), bytes.data() + filled, bytes.size() - filled);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return Error{fmt::format("{}: cannot read {}: {}", path, what, std::strerror(errno))};
      if (got == 0) break;
      filled += static_cast<std::size_t>(got);
    }
    bytes.resize(filled);
  } catch (const std::bad_alloc&) {
    return Error{fmt::format("{}: cannot read {}: not enough memory for its {}", path, what,
                             memory_size_text(static_cast<double>(file->size())))};
  }
  return bytes;
}

}  // namespace psgrad
