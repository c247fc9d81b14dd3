// Reads the machine's memory size from the kernel and formats byte counts.
#include "io/machine_memory.hpp"

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

namespace psgrad {

namespace {

std::optional<std::uint64_t> memtotal_from_proc() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    if (line.rfind("MemTotal:", 0) != 0) continue;
    std::istringstream fields(line.substr(9));
    std::uint64_t kibibytes = 0;
    if (fields >> kibibytes && kibibytes > 0) return kibibytes * 1024;
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> physical_pages_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return std::nullopt;
  return static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page_size);
}

}  // namespace

std::optional<std::uint64_t> machine_memory_bytes() {
  if (auto total = memtotal_from_proc()) return total;
  return physical_pages_bytes();
}

std::optional<MemoryLimit> memory_limit() {
  std::optional<MemoryLimit> limit;
  if (const auto machine = machine_memory_bytes()) limit = MemoryLimit{*machine, "this machine has"};
  rlimit address_space{};
  if (::getrlimit(RLIMIT_AS, &address_space) == 0 && address_space.rlim_cur != RLIM_INFINITY &&
      (!limit || address_space.rlim_cur < limit->bytes))
    limit = MemoryLimit{static_cast<std::uint64_t>(address_space.rlim_cur), "this process's address-space limit (ulimit -v) is"};
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");  // cgroup v2; "max" when unlimited
  std::uint64_t cgroup_bytes = 0;
  if (cgroup >> cgroup_bytes && cgroup_bytes > 0 && (!limit || cgroup_bytes < limit->bytes))
    limit = MemoryLimit{cgroup_bytes, "its cgroup's memory.max is"};
  return limit;
}

std::string memory_size_text(double bytes) {
  static constexpr std::array<const char*, 7> units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::size_t unit = 0;
  while (bytes >= 1024.0 && unit + 1 < units.size()) {
    bytes /= 1024.0;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} B", bytes);
  // 9.96 would print as "10.0": switch to whole numbers by the printed value, not the raw one.
  if (bytes < 9.95) return fmt::format("{:.1f} {}", bytes, units[unit]);
  return fmt::format("{:.0f} {}", bytes, units[unit]);
}

}  // namespace psgrad
