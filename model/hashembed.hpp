// Thinc's HashEmbed.v1 over rows handed in for a batch: an id's four table keys are the four uint32
// values of MurmurHash3(id, seed) modulo the table's rows (nV), and its vector is the sum of those four
// rows; backward adds the id's vector gradient into each of the four rows.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/ragged_ids.hpp"
#include "model/sparse_rows.hpp"

namespace psgrad {

struct HashEmbedSpec {
  std::size_t width = 0;   // nO: the width of each row and of each id's vector
  std::uint64_t rows = 0;  // nV: keys are hash % rows, so at most 2^32 rows are reachable
  std::uint32_t seed = 0;  // Thinc defaults it to the layer's model id; here it is always given
  std::size_t column = 0;  // which field of a batch the layer reads, as Thinc's column of an ids array
};

// The four table keys of one id, in the order of Thinc's keys[i, 0..3].
std::array<std::uint64_t, 4> hashembed_keys(std::uint64_t id, std::uint32_t seed, std::uint64_t rows);

// Where one field's ids find their rows. keys is what a worker pulls for the batch (sorted, unique,
// the order of SparseRows); the row gradients come back with the same keys in the same order.
struct FieldLookup {
  std::vector<std::size_t> offsets;      // the field's bags, as RaggedIds::offsets
  std::vector<std::uint64_t> keys;       // every key the field's ids touch
  std::vector<std::uint32_t> positions;  // four per id: indices into keys

  std::size_t id_count() const { return positions.size() / 4; }
};

FieldLookup look_up(const HashEmbedSpec& spec, const RaggedIds& ids);

// Each id's vector (id_count x width, row-major) from the pulled rows of lookup.keys, summed in key
// order 0..3 as Thinc's gather_add does. The rows must be lookup.keys' rows (a mistake otherwise: throws).
void embed_ids(const HashEmbedSpec& spec, const FieldLookup& lookup, const SparseRows& rows, float* vectors);

// The gradient of every row of lookup.keys from the ids' vector gradients (id_count x width), added
// key column by key column as Thinc's backward scatters; rows touched twice get the sum.
SparseRows embedding_gradient(const HashEmbedSpec& spec, const FieldLookup& lookup, const float* d_vectors);

}  // namespace psgrad
