// A first-in-first-out queue in one ring of slots: it allocates only when it grows past the most it has
// held, so the scheduler's queue costs no heap allocation per scheduled actor (std::list allocated one).
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace psgrad {

template <class T>
class RingQueue {
 public:
  explicit RingQueue(std::size_t capacity = 64) : slots_(round_up(capacity)) {}

  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

  void push_back(T value) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & (slots_.size() - 1)] = std::move(value);
    ++size_;
  }

  // Requires !empty().
  T pop_front() {
    T value = std::move(slots_[head_]);
    head_ = (head_ + 1) & (slots_.size() - 1);
    --size_;
    return value;
  }

 private:
  // A power of two, so wrapping around is a mask.
  static std::size_t round_up(std::size_t capacity) {
    std::size_t slots = 1;
    while (slots < capacity) slots *= 2;
    return slots;
  }

  void grow() {
    std::vector<T> larger(slots_.size() * 2);
    for (std::size_t i = 0; i < size_; ++i) larger[i] = std::move(slots_[(head_ + i) & (slots_.size() - 1)]);
    slots_ = std::move(larger);
    head_ = 0;
  }

  std::vector<T> slots_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace psgrad
