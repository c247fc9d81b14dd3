#include "model/populated_pages.hpp"

#include <cstdint>

#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14's value; older C libraries lack the name
#endif

namespace psgrad {

void populate_pages(void* data, std::size_t bytes) {
  if (data == nullptr || bytes < kPopulateFromBytes) return;
  static const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) & ~(page - 1);
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) & ~(page - 1);
  if (end <= begin) return;
  // Only an optimization: on failure (an old kernel, memory short) the pages fault in on first touch as before.
  (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
}

}  // namespace psgrad
