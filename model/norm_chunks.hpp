// The chunk grid that clip norms are summed on, so that a shard owning part of an array adds up the
// same chunk sums, in the same order, as one server that owns all of it.
#pragma once

#include <cstddef>
#include <vector>

#include "model/parameter_layout.hpp"

namespace psgrad {

// Every array is cut into chunks of at most this many floats from its start. An array's sum of squares
// is its chunks' eight-lane sums (gradient_clip.hpp) added in chunk order, wherever each was computed.
constexpr std::size_t norm_chunk_size = 8192;

struct NormChunk {
  std::size_t array = 0;
  std::size_t begin = 0;  // in the whole layout
  std::size_t size = 0;
  bool owned = false;  // else only its sum of squares is needed: its array is cut between shards
};

// The chunks of every array with floats in [begin, end), in layout order: those inside the range are
// owned, the others belong to an array that a cut at begin or end runs through.
std::vector<NormChunk> norm_chunks(const ParameterLayout& layout, std::size_t begin, std::size_t end);

// Whether a shard may start or end at `cut`: on the chunk grid of the array it falls in, or the end.
bool on_norm_grid(const ParameterLayout& layout, std::size_t cut);

}  // namespace psgrad
