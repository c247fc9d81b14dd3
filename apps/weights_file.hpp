// Writes final weights as raw little-endian floats behind a small header, atomically.
#pragma once

#include <cstdint>
#include <string>

#include "payloads/messages.hpp"
#include "model/result.hpp"

namespace psgrad {

Status write_weights_file(const std::string& path, const Weights& weights);
// FNV-1a (io/fnv1a.hpp) over the weight bytes: equal hashes mean bit-identical weights.
std::uint64_t weights_hash(const FloatBuffer& values);

}  // namespace psgrad
