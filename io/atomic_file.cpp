// Temporary file, fsync, rename, fsync of the folder: the one place psgrad replaces files.
#include "io/atomic_file.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/output_path.hpp"

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

constexpr const char* kTemporaryInfix = ".tmp-";
constexpr std::size_t kTemporarySuffixLength = 6;  // mkostemp's XXXXXX

bool is_temporary_of(const std::string& name, const std::string& target_name) {
  const auto prefix = target_name + kTemporaryInfix;
  if (name.size() != prefix.size() + kTemporarySuffixLength || name.compare(0, prefix.size(), prefix) != 0)
    return false;
  return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(prefix.size()), name.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

// A writer holds an exclusive lock on its temporary file from creation to rename; one whose lock can be
// taken was left by a writer that was killed, and would otherwise stay beside the file for good.
void remove_stale_temporaries(const std::string& path) {
  const std::filesystem::path target(path);
  auto folder = target.parent_path();
  if (folder.empty()) folder = ".";
  const auto target_name = target.filename().string();
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(folder, error)) {
    if (!is_temporary_of(entry.path().filename().string(), target_name)) continue;
    const int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) ::unlink(entry.path().c_str());
    ::close(fd);  // releases the lock
  }
}

// The locked temporary file, created beside `path`.
Result<int> create_locked_temporary(std::string& temporary) {
  for (;;) {
    temporary = temporary.substr(0, temporary.size() - kTemporarySuffixLength) + "XXXXXX";
    const int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
    if (fd < 0) return Error{system_error("cannot create a temporary file beside it", errno)};
    // A cleaner may have taken the name for stale between creation and lock; then it is gone: again.
    struct stat status {};
    if (::flock(fd, LOCK_EX) == 0 && ::fstat(fd, &status) == 0 && status.st_nlink > 0) return fd;
    ::close(fd);
  }
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
  // The rename below would put a regular file in place of a device or FIFO.
  if (auto replaceable = check_replaceable(path, what); !replaceable) return replaceable;
  remove_stale_temporaries(path);
  // A unique name, so two processes writing the same path never share a temporary file; O_CLOEXEC, so
  // worker processes spawned meanwhile do not inherit it.
  std::string temporary = path + kTemporaryInfix + "XXXXXX";
  auto created = create_locked_temporary(temporary);
  if (!created) return fail(created.error());
  const int fd = *created;
  // A second descriptor of the same open file keeps the lock after fd is closed, until the rename.
  const int lock_fd = ::fcntl(fd, F_DUPFD_CLOEXEC, 0);
  ::fchmod(fd, 0644);  // mkstemp's 0600 would make the file unreadable to the rest of the team
  std::string fault;
  if (auto filled = fill(fd); !filled) fault = filled.error();
  else if (::fsync(fd) != 0) fault = system_error("fsync", errno);
  if (::close(fd) != 0 && fault.empty()) fault = system_error("close", errno);
  if (fault.empty() && std::rename(temporary.c_str(), path.c_str()) != 0) fault = system_error("rename", errno);
  if (!fault.empty()) std::remove(temporary.c_str());
  if (lock_fd >= 0) ::close(lock_fd);
  if (!fault.empty()) return fail(fault);
  if (auto folder_fault = sync_folder_of(path); !folder_fault.empty()) return fail(folder_fault);
  return success();
}

Status write_file_atomically(const std::string& path, const std::string& what, std::string_view bytes) {
  return write_file_atomically(path, what, [bytes](int fd) { return write_fully(fd, bytes.data(), bytes.size()); });
}

}  // namespace psgrad
