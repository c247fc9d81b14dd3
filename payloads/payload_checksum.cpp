#include "payloads/payload_checksum.hpp"

#include <cstring>

#include "model/fnv1a.hpp"

namespace psgrad {

namespace {

// Four 64-bit lanes in one AVX2 register (two SSE ones without AVX2). Written as plain arrays of
// lanes, GCC kept the sums in memory between iterations: 15 times slower.
typedef std::uint64_t Lanes __attribute__((vector_size(32)));

}  // namespace

std::uint64_t payload_checksum(const void* data, std::size_t bytes) {
  const auto* at = static_cast<const unsigned char*>(data);
  Lanes low_sums = {}, high_sums = {}, low_running = {}, high_running = {};
  const std::size_t whole = bytes / 64 * 64;
  for (std::size_t offset = 0; offset < whole; offset += 64) {
    Lanes low, high;
    std::memcpy(&low, at + offset, sizeof low);
    std::memcpy(&high, at + offset + sizeof low, sizeof high);
    low_sums += low;
    high_sums += high;
    low_running += low_sums;
    high_running += high_sums;
  }
  auto hash = fnv1a(at + whole, bytes - whole);
  for (const Lanes* lanes : {&low_sums, &high_sums, &low_running, &high_running})
    hash = fnv1a(lanes, sizeof(Lanes), hash);
  return fnv1a(&bytes, sizeof bytes, hash);
}

}  // namespace psgrad
