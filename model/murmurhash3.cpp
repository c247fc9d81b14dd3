#include "model/murmurhash3.hpp"

namespace psgrad {

namespace {

std::uint64_t rotate_left(std::uint64_t x, int bits) { return (x << bits) | (x >> (64 - bits)); }

// MurmurHash3's finalisation mix: every input bit avalanches into every output bit.
std::uint64_t final_mix(std::uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdull;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ull;
  k ^= k >> 33;
  return k;
}

}  // namespace

IdHash hash_id(std::uint64_t id, std::uint32_t seed) {
  // An 8-byte key has no full 16-byte block: only the tail step for k1, then the finalisation.
  constexpr std::uint64_t c1 = 0x87c37b91114253d5ull;
  constexpr std::uint64_t c2 = 0x4cf5ad432745937full;
  constexpr std::uint64_t length = 8;
  std::uint64_t h1 = seed;
  std::uint64_t h2 = seed;
  std::uint64_t k1 = id * c1;
  k1 = rotate_left(k1, 31);
  k1 *= c2;
  h1 ^= k1;
  h1 ^= length;
  h2 ^= length;
  h1 += h2;
  h2 += h1;
  h1 = final_mix(h1);
  h2 = final_mix(h2);
  h1 += h2;
  h2 += h1;
  return {static_cast<std::uint32_t>(h1), static_cast<std::uint32_t>(h1 >> 32), static_cast<std::uint32_t>(h2),
          static_cast<std::uint32_t>(h2 >> 32)};
}

namespace {

std::uint32_t rotate_left_32(std::uint32_t x, int bits) { return (x << bits) | (x >> (32 - bits)); }

// One 4-byte block of MurmurHash3_x86_32.
std::uint32_t mix_block(std::uint32_t h1, std::uint32_t k1) {
  k1 *= 0xcc9e2d51u;
  k1 = rotate_left_32(k1, 15);
  k1 *= 0x1b873593u;
  h1 ^= k1;
  h1 = rotate_left_32(h1, 13);
  return h1 * 5 + 0xe6546b64u;
}

}  // namespace

std::uint32_t hash_id_32(std::uint64_t id, std::uint32_t seed) {
  std::uint32_t h1 = mix_block(seed, static_cast<std::uint32_t>(id));
  h1 = mix_block(h1, static_cast<std::uint32_t>(id >> 32));
  h1 ^= 8;  // the length
  h1 ^= h1 >> 16;
  h1 *= 0x85ebca6bu;
  h1 ^= h1 >> 13;
  h1 *= 0xc2b2ae35u;
  h1 ^= h1 >> 16;
  return h1;
}

}  // namespace psgrad
