#include "model/hashembed.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "model/murmurhash3.hpp"

namespace psgrad {

std::array<std::uint64_t, 4> hashembed_keys(std::uint64_t id, std::uint32_t seed, std::uint64_t rows) {
  const IdHash hash = hash_id(id, seed);
  return {hash[0] % rows, hash[1] % rows, hash[2] % rows, hash[3] % rows};
}

std::size_t keys_per_id(const HashEmbedSpec& spec) {
  switch (spec.keys) {
    case RowKeying::embed: return 1;
    case RowKeying::sparse_linear: return 2;
    case RowKeying::sparse_linear_v1: return 2 * spec.outputs;
    case RowKeying::hash_embed: break;
  }
  return 4;
}

std::size_t vector_width(const HashEmbedSpec& spec) {
  return spec.keys == RowKeying::sparse_linear_v1 ? spec.outputs : spec.width;
}

FieldLookup look_up(const HashEmbedSpec& spec, const RaggedIds& ids) {
  if (spec.rows == 0) throw std::invalid_argument("a HashEmbed table needs at least one row");
  FieldLookup lookup;
  lookup.offsets = ids.offsets();
  lookup.per_id = keys_per_id(spec);
  std::vector<std::uint64_t> id_keys;
  id_keys.reserve(lookup.per_id * ids.id_count());
  for (const auto id : ids.ids()) {
    if (spec.keys == RowKeying::embed) {
      // The model checks its data's ids against nV (SparseModel::check_inputs); Thinc would index out of range.
      if (id >= spec.rows) throw std::invalid_argument(fmt::format("Embed: id {} is beyond the table's {} rows", id, spec.rows));
      id_keys.push_back(id);
    } else if (spec.keys == RowKeying::sparse_linear) {
      id_keys.push_back(hash_id_32(id, 0) % spec.rows);
      id_keys.push_back(hash_id_32(id, 1) % spec.rows);
    } else if (spec.keys == RowKeying::sparse_linear_v1) {
      // Thinc's W[idx + class] with idx = hash & (length - 1): rows = length + nO - 1 cover every index.
      const std::uint64_t mask = spec.rows - spec.outputs;  // length - 1
      const std::uint64_t first = hash_id_32(id, 0) & mask, second = hash_id_32(id, 1) & mask;
      for (std::uint64_t c = 0; c < spec.outputs; ++c) {
        id_keys.push_back(first + c);
        id_keys.push_back(second + c);
      }
    } else {
      for (const auto key : hashembed_keys(id, spec.seed, spec.rows)) id_keys.push_back(key);
    }
  }
  lookup.keys = id_keys;
  std::sort(lookup.keys.begin(), lookup.keys.end());
  lookup.keys.erase(std::unique(lookup.keys.begin(), lookup.keys.end()), lookup.keys.end());
  lookup.positions.reserve(id_keys.size());
  for (const auto key : id_keys) {
    const auto at = std::lower_bound(lookup.keys.begin(), lookup.keys.end(), key);
    lookup.positions.push_back(static_cast<std::uint32_t>(at - lookup.keys.begin()));
  }
  return lookup;
}

void embed_ids(const HashEmbedSpec& spec, const FieldLookup& lookup, const SparseRows& rows, float* vectors) {
  if (rows.width != spec.width || rows.keys != lookup.keys)
    throw std::invalid_argument(fmt::format("embed_ids: got {} rows of width {}, expected the {} rows of width {} "
                                            "the lookup names",
                                            rows.size(), rows.width, lookup.keys.size(), spec.width));
  const std::size_t width = spec.width;
  const std::size_t per_id = lookup.per_id;
  if (spec.keys == RowKeying::sparse_linear_v1) {
    // Output c of an id: its weights at idx1 + c and idx2 + c, one a row, as Thinc's set_scoresC.
    for (std::size_t t = 0; t < lookup.id_count(); ++t)
      for (std::size_t c = 0; c < spec.outputs; ++c)
        vectors[t * spec.outputs + c] = rows.row(lookup.positions[per_id * t + 2 * c])[0] +
                                        rows.row(lookup.positions[per_id * t + 2 * c + 1])[0];
    return;
  }
  for (std::size_t t = 0; t < lookup.id_count(); ++t) {
    float* out = vectors + t * width;
    std::fill(out, out + width, 0.0f);
    for (std::size_t k = 0; k < per_id; ++k) {
      const float* row = rows.row(lookup.positions[per_id * t + k]);
      for (std::size_t i = 0; i < width; ++i) out[i] += row[i];
    }
  }
}

SparseRows embedding_gradient(const HashEmbedSpec& spec, const FieldLookup& lookup, const float* d_vectors) {
  SparseRows gradient(lookup.keys, spec.width);
  const std::size_t width = spec.width;
  const std::size_t per_id = lookup.per_id;
  if (spec.keys == RowKeying::sparse_linear_v1) {
    // As Thinc's set_gradientC: each of an id's two weights of class c gets d(output c).
    for (std::size_t t = 0; t < lookup.id_count(); ++t)
      for (std::size_t c = 0; c < spec.outputs; ++c)
        for (std::size_t k = 2 * c; k < 2 * c + 2; ++k)
          gradient.row(lookup.positions[per_id * t + k])[0] += d_vectors[t * spec.outputs + c];
    return gradient;
  }
  for (std::size_t k = 0; k < per_id; ++k) {
    for (std::size_t t = 0; t < lookup.id_count(); ++t) {
      float* row = gradient.row(lookup.positions[per_id * t + k]);
      const float* d = d_vectors + t * width;
      for (std::size_t i = 0; i < width; ++i) row[i] += d[i];
    }
  }
  return gradient;
}

}  // namespace psgrad
