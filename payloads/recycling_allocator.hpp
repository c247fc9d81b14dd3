// An allocator that keeps what it frees for the next allocation of the same type: for the small,
// fixed-size objects a steady path makes and drops once per message (shared_ptr control blocks).
#pragma once

#include <cstddef>
#include <mutex>
#include <new>
#include <vector>

namespace psgrad {

// Blocks of one type's size, kept once made: after warm-up, as many as were ever alive at once, and
// no call reaches the heap. Single objects only; arrays go to operator new as usual. Any thread may
// allocate or free (a payload is often let go on another thread than the one that read it).
template <class T>
class RecyclingAllocator {
 public:
  using value_type = T;

  RecyclingAllocator() = default;
  template <class U>
  RecyclingAllocator(const RecyclingAllocator<U>&) noexcept {}

  T* allocate(std::size_t count) {
    if (count != 1) return static_cast<T*>(::operator new(count * sizeof(T)));
    {
      auto& kept = store();
      const std::lock_guard<std::mutex> lock(kept.mutex);
      if (!kept.blocks.empty()) {
        void* block = kept.blocks.back();
        kept.blocks.pop_back();
        return static_cast<T*>(block);
      }
    }
    return static_cast<T*>(::operator new(sizeof(T)));
  }

  void deallocate(T* pointer, std::size_t count) noexcept {
    if (count != 1) return ::operator delete(pointer);
    auto& kept = store();
    const std::lock_guard<std::mutex> lock(kept.mutex);
    try {
      kept.blocks.push_back(pointer);
    } catch (const std::bad_alloc&) {
      ::operator delete(pointer);  // the list could not grow: the block goes back to the heap
    }
  }

  template <class U>
  bool operator==(const RecyclingAllocator<U>&) const noexcept {
    return true;
  }
  template <class U>
  bool operator!=(const RecyclingAllocator<U>&) const noexcept {
    return false;
  }

 private:
  struct Store {
    std::mutex mutex;
    std::vector<void*> blocks;
  };
  // Never destroyed: blocks may be freed while the process exits, after statics are gone.
  static Store& store() {
    static auto* kept = new Store;
    return *kept;
  }
};

}  // namespace psgrad
