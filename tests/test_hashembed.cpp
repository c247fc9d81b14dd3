// HashEmbed.v1's keys, forward and backward over rows handed in for a batch.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "model/hashembed.hpp"

using namespace psgrad;

namespace {

const std::vector<std::uint64_t> ids = {0, 1, 42, (1ull << 63) + 5, ~0ull, 10639093010105930009ull};

// Rows whose values name their key and column, so every sum below is exact in float.
SparseRows counting_rows(const std::vector<std::uint64_t>& keys, std::size_t width) {
  SparseRows rows(keys, width);
  for (std::size_t i = 0; i < keys.size(); ++i)
    for (std::size_t c = 0; c < width; ++c) rows.row(i)[c] = static_cast<float>(keys[i] * 10 + c);
  return rows;
}

}  // namespace

TEST_CASE("hashembed_keys are Thinc's ops.hash(ids, seed) % nV") {
  // From thinc 8.1.7: (NumpyOps().hash(numpy.array(ids, dtype="uint64"), seed) % nV).tolist().
  const std::vector<std::array<std::uint64_t, 4>> seed_8_rows_1000 = {
      {0, 0, 0, 0}, {108, 286, 162, 281}, {56, 566, 288, 350}, {760, 880, 640, 172}, {950, 181, 277, 624},
      {950, 174, 629, 262}};
  const std::vector<std::array<std::uint64_t, 4>> seed_12345_rows_7 = {
      {6, 2, 6, 2}, {3, 1, 0, 5}, {1, 0, 4, 5}, {2, 1, 6, 1}, {5, 6, 1, 5}, {5, 2, 0, 3}};
  for (std::size_t i = 0; i < ids.size(); ++i) {
    CAPTURE(ids[i]);
    CHECK(hashembed_keys(ids[i], 8, 1000) == seed_8_rows_1000[i]);
    CHECK(hashembed_keys(ids[i], 12345, 7) == seed_12345_rows_7[i]);
  }
}

TEST_CASE("look_up lists each touched key once, sorted, and points every id at its four keys") {
  const HashEmbedSpec spec{3, 7, 12345, 0};
  RaggedIds field;
  field.add_example({ids[1], ids[2]});
  field.add_example({});
  field.add_example({ids[0], ids[1]});
  const FieldLookup lookup = look_up(spec, field);
  // Keys of ids 1, 42 and 0 with seed 12345 and 7 rows: {3,1,0,5}, {1,0,4,5}, {6,2,6,2}.
  CHECK(lookup.keys == std::vector<std::uint64_t>{0, 1, 2, 3, 4, 5, 6});
  CHECK(lookup.offsets == std::vector<std::size_t>{0, 2, 2, 4});
  REQUIRE(lookup.id_count() == 4);
  const std::vector<std::uint64_t> in_order = {ids[1], ids[2], ids[0], ids[1]};
  for (std::size_t t = 0; t < 4; ++t) {
    const auto keys = hashembed_keys(in_order[t], spec.seed, spec.rows);
    for (std::size_t k = 0; k < 4; ++k) CHECK(lookup.keys[lookup.positions[4 * t + k]] == keys[k]);
  }
}

TEST_CASE("an id's vector is the sum of its four rows, a key drawn twice counting twice") {
  const HashEmbedSpec spec{2, 7, 12345, 0};
  RaggedIds field;
  field.add_example({ids[0], ids[2]});  // keys {6,2,6,2} and {1,0,4,5}
  const FieldLookup lookup = look_up(spec, field);
  const SparseRows rows = counting_rows(lookup.keys, spec.width);
  std::vector<float> vectors(2 * spec.width);
  embed_ids(spec, lookup, rows, vectors.data());
  CHECK(vectors == std::vector<float>{2 * 60 + 2 * 20, 2 * 61 + 2 * 21, 10 + 0 + 40 + 50, 11 + 1 + 41 + 51});
}

TEST_CASE("backward adds each id's gradient into its four rows, summing repeats") {
  const HashEmbedSpec spec{2, 7, 12345, 0};
  RaggedIds field;
  field.add_example({ids[0], ids[2], ids[2]});  // keys {6,2,6,2}, {1,0,4,5}, {1,0,4,5}
  const FieldLookup lookup = look_up(spec, field);
  const std::vector<float> d_vectors = {1, 2, 10, 20, 100, 200};
  const SparseRows gradient = embedding_gradient(spec, lookup, d_vectors.data());
  CHECK(gradient.keys == std::vector<std::uint64_t>{0, 1, 2, 4, 5, 6});
  CHECK(gradient.width == 2);
  // Keys 0, 1, 4, 5 get both of id 42's gradients; keys 2 and 6 get id 0's twice.
  CHECK(gradient.values == std::vector<float>{110, 220, 110, 220, 2, 4, 110, 220, 110, 220, 2, 4});
}

TEST_CASE("embed_ids refuses rows that are not the lookup's") {
  const HashEmbedSpec spec{2, 7, 12345, 0};
  RaggedIds field;
  field.add_example({ids[1]});
  const FieldLookup lookup = look_up(spec, field);
  std::vector<float> vectors(spec.width);
  auto other_keys = lookup.keys;
  other_keys.back() += 1;
  CHECK_THROWS_AS(embed_ids(spec, lookup, counting_rows(other_keys, 2), vectors.data()), std::invalid_argument);
  CHECK_THROWS_AS(embed_ids(spec, lookup, counting_rows(lookup.keys, 3), vectors.data()), std::invalid_argument);
}
