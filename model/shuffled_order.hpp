// A data set's example order, a fresh permutation each epoch from a seeded generator, that a Position
// saves and restores exactly: the stream the dense and the sparse batchers both serve batches from.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <utility>
#include <vector>

#include "model/random.hpp"

namespace psgrad {

class ShuffledOrder {
 public:
  // Where the stream stands, enough to continue it exactly (for checkpoints).
  struct Position {
    std::uint64_t epoch = 0;
    std::uint64_t cursor = 0;   // examples already served in this epoch
    Random::State epoch_rng{};  // generator state before this epoch's shuffle
  };

  ShuffledOrder(std::size_t count, std::uint64_t seed) : rng_(seed), order_(count) { shuffle(); }

  std::size_t count() const { return order_.size(); }
  const std::vector<std::uint32_t>& order() const { return order_; }
  std::size_t cursor() const { return cursor_; }
  std::uint64_t epoch() const { return epoch_; }
  // How many examples the next batch of at most batch_size holds: the last one of an epoch may be short.
  std::size_t next_size(std::size_t batch_size) const { return std::min(batch_size, order_.size() - cursor_); }

  // After a batch of `size` examples: the next epoch starts at once, so position() after an epoch's
  // last batch already points past it.
  void advance(std::size_t size) {
    cursor_ += size;
    if (cursor_ == order_.size()) {
      ++epoch_;
      cursor_ = 0;
      shuffle();
    }
  }

  Position position() const { return Position{epoch_, cursor_, epoch_rng_}; }
  // False, changing nothing, when the position's cursor is past the end of this data set.
  bool restore(const Position& position) {
    if (position.cursor >= order_.size()) return false;
    rng_.set_state(position.epoch_rng);
    shuffle();
    epoch_ = position.epoch;
    cursor_ = static_cast<std::size_t>(position.cursor);
    return true;
  }

 private:
  // Every epoch starts from the identity order (Fisher–Yates), so the permutation depends only on
  // epoch_rng_: that is what lets restore() rebuild it from a Position.
  void shuffle() {
    epoch_rng_ = rng_.state();
    std::iota(order_.begin(), order_.end(), std::uint32_t{0});
    for (std::size_t i = order_.size(); i > 1; --i) std::swap(order_[i - 1], order_[rng_.below(i)]);
  }

  Random rng_;
  Random::State epoch_rng_{};
  std::vector<std::uint32_t> order_;
  std::size_t cursor_ = 0;
  std::uint64_t epoch_ = 0;
};

}  // namespace psgrad
