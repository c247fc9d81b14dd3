// MurmurHash64A (public domain, Austin Appleby), with its little-endian 8-byte reads spelled out.
#include "model/string_hash.hpp"

namespace psgrad {

namespace {

std::uint64_t little_endian_word(const unsigned char* bytes) {
  std::uint64_t word = 0;
  for (int i = 7; i >= 0; --i) word = (word << 8) | bytes[i];
  return word;
}

}  // namespace

std::uint64_t murmurhash64a(const void* key, std::size_t length, std::uint64_t seed) {
  constexpr std::uint64_t m = 0xc6a4a7935bd1e995ull;
  constexpr int r = 47;
  const auto* bytes = static_cast<const unsigned char*>(key);
  std::uint64_t h = seed ^ (length * m);
  const std::size_t words = length / 8;
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t k = little_endian_word(bytes + 8 * i);
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }
  const unsigned char* tail = bytes + 8 * words;
  switch (length & 7) {
    case 7: h ^= std::uint64_t{tail[6]} << 48; [[fallthrough]];
    case 6: h ^= std::uint64_t{tail[5]} << 40; [[fallthrough]];
    case 5: h ^= std::uint64_t{tail[4]} << 32; [[fallthrough]];
    case 4: h ^= std::uint64_t{tail[3]} << 24; [[fallthrough]];
    case 3: h ^= std::uint64_t{tail[2]} << 16; [[fallthrough]];
    case 2: h ^= std::uint64_t{tail[1]} << 8; [[fallthrough]];
    case 1:
      h ^= std::uint64_t{tail[0]};
      h *= m;
  }
  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

}  // namespace psgrad
