// The 64-bit string hash of spaCy's StringStore: MurmurHash64A of the UTF-8 bytes with seed 1, so ids
// hashed here are the ids Thinc and spaCy models see for the same strings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace psgrad {

// Austin Appleby's MurmurHash64A, as Python's murmurhash package builds it (its hash64). Reads the key
// byte by byte, so it gives the same value on any alignment and byte order.
std::uint64_t murmurhash64a(const void* key, std::size_t length, std::uint64_t seed);

// spaCy's hash_string: murmurhash64a(utf8, length, 1).
inline std::uint64_t string_hash(std::string_view text) { return murmurhash64a(text.data(), text.size(), 1); }

}  // namespace psgrad
