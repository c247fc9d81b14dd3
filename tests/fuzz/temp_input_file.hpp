// One scratch file per fuzzer process, rewritten with each input, for readers that only take a path.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include <unistd.h>

namespace psgrad::fuzz {

class TempInputFile {
 public:
  // The pid keeps parallel fuzzers (-jobs, or two CTest runs) from sharing a file.
  explicit TempInputFile(const std::string& name)
      : path_((folder() / ("psgrad-fuzz-" + std::to_string(::getpid()) + "-" + name)).string()) {}
  ~TempInputFile() { std::remove(path_.c_str()); }

  // Aborts rather than returning: a failed write would make the fuzzer silently test nothing.
  const std::string& write(const std::uint8_t* data, std::size_t size) {
    std::FILE* file = std::fopen(path_.c_str(), "wb");
    if (!file || (size > 0 && std::fwrite(data, 1, size, file) != size) || std::fclose(file) != 0) {
      std::perror(path_.c_str());
      std::abort();
    }
    return path_;
  }

 private:
  // tmpfs when there is one: ext4 flushes a file rewritten in place to disk on close, which made the
  // fuzzers spend most of their time waiting for the disk.
  static std::filesystem::path folder() {
    std::error_code ec;
    if (std::filesystem::is_directory("/dev/shm", ec)) return "/dev/shm";
    return std::filesystem::temp_directory_path();
  }

  std::string path_;
};

}  // namespace psgrad::fuzz
