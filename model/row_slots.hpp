// The slot of each key of a sparse table: an open-addressing hash map (linear probing over one flat
// array), so a lookup is a multiply and, most often, one cache line, where std::unordered_map chases a
// node pointer per key. Its buckets come from AlignedAllocator for their pages, made in one system call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/aligned_floats.hpp"

namespace psgrad {

class RowSlots {
 public:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  std::size_t size() const { return size_; }
  // The slot of key, or kNone for a key never added.
  std::size_t find(std::uint64_t key) const;
  // The slot of key, added as the next slot (size() before the call) when new; `added` says which.
  std::size_t insert(std::uint64_t key, bool& added);
  // Every key, in no particular order.
  std::vector<std::uint64_t> keys() const;

 private:
  // One bucket: a key and its slot; kNone marks a free bucket, so every key (0 too) can be stored.
  struct Bucket {
    std::uint64_t key = 0;
    std::size_t slot = kNone;
  };

  std::size_t home(std::uint64_t key) const;
  void grow();

  std::vector<Bucket, AlignedAllocator<Bucket>> buckets_;  // a power of two of them, at most half full
  std::size_t size_ = 0;
  unsigned shift_ = 64;  // 64 - log2(buckets)
};

}  // namespace psgrad
