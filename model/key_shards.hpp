// Table keys spread over K shards by key % K (ps-lite's modulo partition): a batch's pull list and row
// gradients split into one part per shard, and the parts joined back in key order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/result.hpp"
#include "model/sparse_rows.hpp"

namespace psgrad {

inline std::size_t shard_of_key(std::uint64_t key, std::size_t shards) {
  return static_cast<std::size_t>(key % shards);
}

// Sorted unique keys split by shard; each part keeps their order.
std::vector<std::vector<std::uint64_t>> split_keys(const std::vector<std::uint64_t>& keys, std::size_t shards);

// Rows split the same way, each part with its keys' rows.
std::vector<SparseRows> split_rows(const SparseRows& rows, std::size_t shards);

// The rows of `keys` (sorted, unique) from the shards' answers: parts[s] must hold the rows of
// split_keys(keys)[s] at `width`; an error names the first shard whose part does not.
Result<SparseRows> join_rows(const std::vector<std::uint64_t>& keys, std::size_t width,
                             const std::vector<const SparseRows*>& parts);

// Rows of disjoint key sets (every shard's whole table) as one block in key order.
SparseRows merge_rows(const std::vector<const SparseRows*>& parts, std::size_t width);

}  // namespace psgrad
