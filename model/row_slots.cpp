#include "model/row_slots.hpp"

namespace psgrad {

std::size_t RowSlots::home(std::uint64_t key) const {
  // Fibonacci hashing takes the product's top bits: a shard's keys share their low bits (key % shards).
  return static_cast<std::size_t>((key * 0x9e3779b97f4a7c15ull) >> shift_);
}

std::size_t RowSlots::find(std::uint64_t key) const {
  if (buckets_.empty()) return kNone;
  const std::size_t mask = buckets_.size() - 1;
  for (std::size_t i = home(key);; i = (i + 1) & mask) {
    const Bucket& bucket = buckets_[i];
    if (bucket.slot == kNone || bucket.key == key) return bucket.slot;
  }
}

std::vector<std::uint64_t> RowSlots::keys() const {
  std::vector<std::uint64_t> keys;
  keys.reserve(size_);
  for (const Bucket& bucket : buckets_)
    if (bucket.slot != kNone) keys.push_back(bucket.key);
  return keys;
}

std::size_t RowSlots::insert(std::uint64_t key, bool& added) {
  if (2 * (size_ + 1) > buckets_.size()) grow();
  const std::size_t mask = buckets_.size() - 1;
  for (std::size_t i = home(key);; i = (i + 1) & mask) {
    Bucket& bucket = buckets_[i];
    if (bucket.slot == kNone) {
      bucket = Bucket{key, size_++};
      added = true;
      return bucket.slot;
    }
    if (bucket.key == key) {
      added = false;
      return bucket.slot;
    }
  }
}

void RowSlots::grow() {
  const std::size_t count = buckets_.empty() ? 64 : 2 * buckets_.size();
  shift_ = 64;
  for (std::size_t c = count; c > 1; c >>= 1) --shift_;
  std::vector<Bucket, AlignedAllocator<Bucket>> old(count, Bucket{});
  old.swap(buckets_);
  const std::size_t mask = count - 1;
  for (const Bucket& bucket : old) {
    if (bucket.slot == kNone) continue;
    std::size_t i = home(bucket.key);
    while (buckets_[i].slot != kNone) i = (i + 1) & mask;
    buckets_[i] = bucket;
  }
}

}  // namespace psgrad
