// A socket (or other file descriptor) that closes itself: the gate's listener, its waiting
// connections and a worker's dial own one until they hand it to CAF.
#pragma once

#include <utility>

#include <unistd.h>

namespace psgrad {

class UniqueSocket {
 public:
  UniqueSocket() = default;
  explicit UniqueSocket(int fd) : fd_(fd) {}
  UniqueSocket(UniqueSocket&& other) noexcept : fd_(other.release()) {}
  UniqueSocket& operator=(UniqueSocket&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueSocket(const UniqueSocket&) = delete;
  UniqueSocket& operator=(const UniqueSocket&) = delete;
  ~UniqueSocket() { reset(); }

  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  // Gives up ownership, e.g. to a CAF scribe that closes it in its turn.
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace psgrad
