#include "model/key_shards.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

namespace psgrad {

std::vector<std::vector<std::uint64_t>> split_keys(const std::vector<std::uint64_t>& keys, std::size_t shards) {
  std::vector<std::vector<std::uint64_t>> parts(shards);
  for (const auto key : keys) parts[shard_of_key(key, shards)].push_back(key);
  return parts;
}

std::vector<SparseRows> split_rows(const SparseRows& rows, std::size_t shards) {
  std::vector<SparseRows> parts(shards);
  for (auto& part : parts) part.width = rows.width;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto& part = parts[shard_of_key(rows.keys[i], shards)];
    part.keys.push_back(rows.keys[i]);
    part.values.insert(part.values.end(), rows.row(i), rows.row(i) + rows.width);
  }
  return parts;
}

Result<SparseRows> join_rows(const std::vector<std::uint64_t>& keys, std::size_t width,
                             const std::vector<const SparseRows*>& parts) {
  const std::size_t shards = parts.size();
  const auto expected = split_keys(keys, shards);
  for (std::size_t s = 0; s < shards; ++s)
    if (parts[s]->width != width || parts[s]->keys != expected[s] ||
        parts[s]->values.size() != expected[s].size() * width)
      return Error{fmt::format("shard {} answered {} rows of width {} for {} keys of width {}", s, parts[s]->size(),
                               parts[s]->width, expected[s].size(), width)};
  SparseRows joined(keys, width);
  std::vector<std::size_t> cursor(shards, 0);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::size_t s = shard_of_key(keys[i], shards);
    const float* row = parts[s]->row(cursor[s]++);
    std::copy(row, row + width, joined.row(i));
  }
  return joined;
}

SparseRows merge_rows(const std::vector<const SparseRows*>& parts, std::size_t width) {
  std::vector<std::pair<std::uint64_t, const float*>> rows;
  for (const auto* part : parts)
    for (std::size_t i = 0; i < part->size(); ++i) rows.emplace_back(part->keys[i], part->row(i));
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<std::uint64_t> keys(rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) keys[i] = rows[i].first;
  SparseRows merged(std::move(keys), width);
  for (std::size_t i = 0; i < rows.size(); ++i) std::copy(rows[i].second, rows[i].second + width, merged.row(i));
  return merged;
}

}  // namespace psgrad
