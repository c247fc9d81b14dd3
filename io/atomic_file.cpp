// Temporary file, fsync, rename, fsync of the folder: the one place psgrad replaces files.
#include "io/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

namespace psgrad {

namespace {

std::string system_error(const char* step, int error) { return fmt::format("{}: {}", step, std::strerror(error)); }

// Without this, a crash soon after the rename could bring back the old directory entry.
std::string sync_folder_of(const std::string& path) {
  auto folder = std::filesystem::path(path).parent_path();
  if (folder.empty()) folder = ".";
  const int fd = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return system_error("cannot open its folder to sync it", errno);
  // EINVAL: a file system that cannot sync folders; the file itself is synced, which is all it offers.
  const bool synced = ::fsync(fd) == 0 || errno == EINVAL;
  const int error = errno;
  ::close(fd);
  return synced ? std::string() : system_error("fsync of its folder", error);
}

}  // namespace

Status write_fully(int fd, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const auto written = ::write(fd, bytes, size);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) return Error{system_error("write", written < 0 ? errno : EIO)};
    bytes += written;
    size -= static_cast<std::size_t>(written);
  }
  return success();
}

Status write_file_atomically(const std::string& path, const std::string& what,
                             const std::function<Status(int fd)>& fill) {
  auto fail = [&](const std::string& fault) { return Error{fmt::format("{}: cannot write {}: {}", path, what, fault)}; };
  // A unique name, so two processes writing the same path never share a temporary file; O_CLOEXEC, so
  // worker processes spawned meanwhile do not inherit it.
  std::string temporary = path + ".tmp-XXXXXX";
  const int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
  if (fd < 0) return fail(system_error("cannot create a temporary file beside it", errno));
  ::fchmod(fd, 0644);  // mkstemp's 0600 would make the file unreadable to the rest of the team
  std::string fault;
  if (auto filled = fill(fd); !filled) fault = filled.error();
  else if (::fsync(fd) != 0) fault = system_error("fsync", errno);
  if (::close(fd) != 0 && fault.empty()) fault = system_error("close", errno);
  if (fault.empty() && std::rename(temporary.c_str(), path.c_str()) != 0) fault = system_error("rename", errno);
  if (!fault.empty()) {
    std::remove(temporary.c_str());
    return fail(fault);
  }
  if (auto folder_fault = sync_folder_of(path); !folder_fault.empty()) return fail(folder_fault);
  return success();
}

Status write_file_atomically(const std::string& path, const std::string& what, std::string_view bytes) {
  return write_file_atomically(path, what, [bytes](int fd) { return write_fully(fd, bytes.data(), bytes.size()); });
}

}  // namespace psgrad
