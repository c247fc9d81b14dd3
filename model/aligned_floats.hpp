// Float storage aligned to 64 bytes. Eigen's vectorized kernels pick their summation order by a
// buffer's alignment, so every buffer the model computes on starts on the same boundary: that keeps
// results bit-identical across threads, processes and machines. Large buffers get their pages at once
// (populated_pages.hpp).
#pragma once

#include <cstddef>
#include <cstdlib>
#include <new>
#include <vector>

#include "model/populated_pages.hpp"

namespace psgrad {

template <class T>
struct AlignedAllocator {
  using value_type = T;
  static constexpr std::size_t alignment = 64;
  AlignedAllocator() = default;
  template <class U>
  AlignedAllocator(const AlignedAllocator<U>&) {}
  T* allocate(std::size_t n) {
    const std::size_t bytes = ((n * sizeof(T) + alignment - 1) / alignment) * alignment;
    void* p = std::aligned_alloc(alignment, bytes == 0 ? alignment : bytes);
    if (!p) throw std::bad_alloc();
    populate_pages(p, bytes);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t) { std::free(p); }
  template <class U>
  bool operator==(const AlignedAllocator<U>&) const { return true; }
  template <class U>
  bool operator!=(const AlignedAllocator<U>&) const { return false; }
};

using AlignedFloats = std::vector<float, AlignedAllocator<float>>;

}  // namespace psgrad
