// How much memory this machine has, and byte counts spelled for people ("2.9 TiB").
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace psgrad {

// MemTotal from /proc/meminfo, else the physical pages sysconf reports; nothing when neither answers.
std::optional<std::uint64_t> machine_memory_bytes();

// Binary units with one decimal below 10 ("2.9 TiB", "24 GiB", "512 B"); a double, so estimates far
// beyond 64 bits still print.
std::string memory_size_text(double bytes);

}  // namespace psgrad
