// MurmurHash3 of one uint64 id as Thinc's ops.hash computes it, and spaCy's 64-bit string hash.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace psgrad {

// Four 32-bit hashes of one id: the low and high halves of MurmurHash3's two 64-bit outputs.
using IdHash = std::array<std::uint32_t, 4>;

// MurmurHash3_x64_128 of the id's 8 little-endian bytes with seed, split into four uint32 — one row
// of Thinc's ops.hash(ids, seed). Thinc names its routine MurmurHash3_x86_128_uint64, but the
// arithmetic is the x64 variant's (64-bit lanes, fmix64), and that is what is reproduced here.
IdHash hash_id(std::uint64_t id, std::uint32_t seed);

// MurmurHash64A (MurmurHash2's 64-bit variant) of length bytes.
std::uint64_t murmurhash64a(const void* bytes, std::size_t length, std::uint64_t seed);

// A text token's id as spaCy's StringStore makes it: MurmurHash64A of the UTF-8 bytes with seed 1.
inline std::uint64_t hash_token(std::string_view utf8) { return murmurhash64a(utf8.data(), utf8.size(), 1); }

}  // namespace psgrad
