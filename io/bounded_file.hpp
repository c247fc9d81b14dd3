// Opening a file to read only once it has proved to be a regular file within a size limit, so
// /dev/zero, a FIFO or a sparse terabyte is refused before a byte is read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "model/result.hpp"

namespace psgrad {

// An open, checked descriptor; closed on destruction unless released.
class CheckedFile {
 public:
  CheckedFile(int fd, std::uint64_t size) : fd_(fd), size_(size) {}
  CheckedFile(CheckedFile&& other) noexcept : fd_(other.fd_), size_(other.size_) { other.fd_ = -1; }
  CheckedFile& operator=(CheckedFile&&) = delete;
  CheckedFile(const CheckedFile&) = delete;
  CheckedFile& operator=(const CheckedFile&) = delete;
  ~CheckedFile();

  int fd() const { return fd_; }
  std::uint64_t size() const { return size_; }  // when it was checked
  // Hands the descriptor to a reader that closes it itself (zlib's gzdopen).
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_;
  std::uint64_t size_;
};

// "a character device", "a FIFO (named pipe)", "a folder" ... for a stat mode that is not a regular file.
const char* file_kind_text(unsigned int mode);

// Why nothing can be looked at under `path`: "<path>: not found", "<path>: is a symbolic link loop", or
// the system's reason; nothing when something is there (of any kind).
std::optional<Error> missing_path(const std::string& path);

// Errors are one line naming the file: "<path>: cannot open <what>[: <reason>]", "<path>: is a
// character device, not a <what>", "<path>: is 2.0 TiB, more than any <what> (at most 9.0 GiB)".
// The checks are made on the opened descriptor, which is opened without blocking on a FIFO.
Result<CheckedFile> open_checked_file(const std::string& path, const std::string& what, std::uint64_t max_bytes);

// The whole file, read through open_checked_file; a file that grows past max_bytes while being read
// is refused too, and so is one that needs more memory than there is.
Result<std::string> read_checked_file(const std::string& path, const std::string& what, std::uint64_t max_bytes);

}  // namespace psgrad
