// MurmurHash3 of one uint64 id as Thinc's ops.hash computes it (strings: model/string_hash.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace psgrad {

// Four 32-bit hashes of one id: the low and high halves of MurmurHash3's two 64-bit outputs.
using IdHash = std::array<std::uint32_t, 4>;

// MurmurHash3_x64_128 of the id's 8 little-endian bytes with seed, split into four uint32 — one row
// of Thinc's ops.hash(ids, seed). Thinc names its routine MurmurHash3_x86_128_uint64, but the
// arithmetic is the x64 variant's (64-bit lanes, fmix64), and that is what is reproduced here.
IdHash hash_id(std::uint64_t id, std::uint32_t seed);

// MurmurHash3_x86_32 of the id's 8 little-endian bytes with seed, as Thinc's SparseLinear hashes its keys.
std::uint32_t hash_id_32(std::uint64_t id, std::uint32_t seed);

}  // namespace psgrad
