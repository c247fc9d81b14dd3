// FNV-1a, the 64-bit hash psgrad uses to name configs and check stored data: simple and stable everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace psgrad {

constexpr std::uint64_t fnv1a_offset_basis = 14695981039346656037ull;

inline std::uint64_t fnv1a(const void* data, std::size_t size, std::uint64_t hash = fnv1a_offset_basis) {
  const auto* bytes = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) {
    hash ^= bytes[i];
    hash *= 1099511628211ull;
  }
  return hash;
}

inline std::uint64_t fnv1a(std::string_view text) { return fnv1a(text.data(), text.size()); }

// 16 lower-case hex digits, the spelling metrics files and messages use.
inline std::string hash_hex(std::uint64_t hash) { return fmt::format("{:016x}", hash); }

}  // namespace psgrad
