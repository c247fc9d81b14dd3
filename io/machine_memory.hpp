// How much memory this machine has, and byte counts spelled for people ("2.9 TiB").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace psgrad {

// MemTotal from /proc/meminfo, else the physical pages sysconf reports; nothing when neither answers.
std::optional<std::uint64_t> machine_memory_bytes();

// What this process can have: the machine's memory, or less where an address-space limit (ulimit -v)
// or the cgroup's memory.max is lower; holder says which, for messages ("this machine has").
struct MemoryLimit {
  std::uint64_t bytes = 0;
  std::string holder = "this machine has";
};
std::optional<MemoryLimit> memory_limit();

// Binary units with one decimal below 10 ("2.9 TiB", "24 GiB", "512 B"); a double, so estimates far
// beyond 64 bits still print.
std::string memory_size_text(double bytes);

}  // namespace psgrad
