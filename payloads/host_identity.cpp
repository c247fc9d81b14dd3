// Where this process runs, as far as shared memory goes: the boot, the user and the network and process
// namespaces, which together decide whether two processes can open each other's memfds.
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include <fmt/format.h>

#include "payloads/shared_memory.hpp"

namespace psgrad {

namespace {

std::string first_line(const char* path) {
  std::ifstream file(path);
  std::string line;
  std::getline(file, line);
  return line;
}

std::string namespace_inode(const char* path) {
  struct stat status {};
  return stat(path, &status) == 0 ? std::to_string(status.st_ino) : std::string();
}

}  // namespace

std::string shared_memory_host_identity() {
  const auto boot = first_line("/proc/sys/kernel/random/boot_id");
  const auto network = namespace_inode("/proc/self/ns/net");
  const auto processes = namespace_inode("/proc/self/ns/pid");
  if (boot.empty() || network.empty() || processes.empty()) return {};
  return fmt::format("{}/{}/{}/{}", boot, getuid(), network, processes);
}

}  // namespace psgrad
