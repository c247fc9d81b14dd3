// The chunk grid that clip norms are summed on, so a shard that owns part of an array can clip by the
// norm of all of it without holding the rest: whoever pushes the gradient sums the squares of the
// chunks the shard does not hold, with the same arithmetic the shard would use.
#pragma once

#include <cstddef>
#include <cstdint>
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
  std::size_t foreign = 0;  // when not owned: its index among the chunks not owned, in chunk order
};

// Floats [begin, begin + size) of the whole layout.
struct GradientRange {
  std::uint64_t begin = 0;
  std::uint64_t size = 0;
  bool operator==(const GradientRange& other) const { return begin == other.begin && size == other.size; }
};

// The chunks of every array with floats in [begin, end), in layout order: those inside the range are
// owned, the others belong to an array that a cut at begin or end runs through.
std::vector<NormChunk> norm_chunks(const ParameterLayout& layout, std::size_t begin, std::size_t end);

// The chunks not owned, in the order a step takes their sums of squares.
std::vector<GradientRange> foreign_ranges(const std::vector<NormChunk>& chunks);

// Whether a shard may start or end at `cut`: on the chunk grid of the array it falls in, or the end.
bool on_norm_grid(const ParameterLayout& layout, std::size_t cut);

// The sum of squares a step takes for its clip norm of floats [offset, offset + size) of `count`
// gradients: of the one gradient, or of their sum in the given order (`scratch` holds size floats).
double range_squares(const float* const* gradients, std::size_t count, std::size_t offset, std::size_t size,
                     float* scratch);

}  // namespace psgrad
