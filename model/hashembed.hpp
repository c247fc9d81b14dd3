// Thinc's HashEmbed.v1 over rows handed in for a batch: an id's four table keys are the four uint32
// values of MurmurHash3(id, seed) modulo the table's rows (nV), and its vector is the sum of those four
// rows; backward adds the id's vector gradient into each of the four rows. Embed.v1 (an id's row is the
// id's) and SparseLinear.v2 (two hashed rows, summed) are tables the same way.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/ragged_ids.hpp"
#include "model/sparse_rows.hpp"

namespace psgrad {

// How a table finds an id's rows: HashEmbed's four hashed keys, Embed's id itself, SparseLinear.v2's two
// hashed keys (MurmurHash3_x86_32 with seeds 0 and 1, modulo its length). SparseLinear.v1 indexes Thinc's
// flat W by hash & (length - 1) plus the class, so its windows of nO weights overlap: its table holds one
// weight a row, keyed by its place in that W, and an id has 2 x nO of them.
enum class RowKeying { hash_embed, embed, sparse_linear, sparse_linear_v1 };

struct HashEmbedSpec {
  std::size_t width = 0;   // nO: the width of each row and (but SparseLinear.v1's) of each id's vector
  std::uint64_t rows = 0;  // nV: keys are hash % rows, so at most 2^32 rows are reachable
  std::uint32_t seed = 0;  // Thinc defaults it to the layer's model id; here it is always given
  std::size_t column = 0;  // which field of a batch the layer reads, as Thinc's column of an ids array
  RowKeying keys = RowKeying::hash_embed;
  // A row's first values: uniform(low, high), Thinc's uniform_init; SparseLinear's are zero.
  float low = -0.1f;
  float high = 0.1f;
  std::size_t outputs = 0;  // SparseLinear.v1: its nO, the width of an id's vector (its rows have width 1)
};

// The keys one id has in the table: 4, 1, 2 or SparseLinear.v1's 2 x nO.
std::size_t keys_per_id(const HashEmbedSpec& spec);

// The width of an id's vector: its rows' width, or SparseLinear.v1's nO.
std::size_t vector_width(const HashEmbedSpec& spec);

// The four table keys of one id, in the order of Thinc's keys[i, 0..3].
std::array<std::uint64_t, 4> hashembed_keys(std::uint64_t id, std::uint32_t seed, std::uint64_t rows);

// Where one field's ids find their rows. keys is what a worker pulls for the batch (sorted, unique,
// the order of SparseRows); the row gradients come back with the same keys in the same order.
struct FieldLookup {
  std::vector<std::size_t> offsets;      // the field's bags, as RaggedIds::offsets
  std::vector<std::uint64_t> keys;       // every key the field's ids touch
  std::vector<std::uint32_t> positions;  // keys_per_id per id: indices into keys
  std::size_t per_id = 4;

  std::size_t id_count() const { return positions.size() / per_id; }
};

FieldLookup look_up(const HashEmbedSpec& spec, const RaggedIds& ids);

// Each id's vector (id_count x width, row-major) from the pulled rows of lookup.keys, summed in key
// order 0..3 as Thinc's gather_add does. The rows must be lookup.keys' rows (a mistake otherwise: throws).
void embed_ids(const HashEmbedSpec& spec, const FieldLookup& lookup, const SparseRows& rows, float* vectors);

// The gradient of every row of lookup.keys from the ids' vector gradients (id_count x width), added
// key column by key column as Thinc's backward scatters; rows touched twice get the sum.
SparseRows embedding_gradient(const HashEmbedSpec& spec, const FieldLookup& lookup, const float* d_vectors);

}  // namespace psgrad
