// populate_pages: fresh memory it is given is present afterwards and unchanged; small regions are left
// to fault; AlignedAllocator's large buffers come populated.
#include <doctest/doctest.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

#include "model/aligned_floats.hpp"
#include "model/populated_pages.hpp"

namespace psgrad {

namespace {

// Pages of [data, data + bytes) present in memory, by mincore.
std::size_t resident_pages(void* data, std::size_t bytes) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> flags((bytes + page - 1) / page);
  REQUIRE(mincore(data, bytes, flags.data()) == 0);
  std::size_t resident = 0;
  for (const unsigned char flag : flags) resident += flag & 1u;
  return resident;
}

// A fresh private anonymous mapping: none of its pages is present until touched.
struct FreshPages {
  explicit FreshPages(std::size_t size) : bytes(size) {
    data = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    REQUIRE(data != MAP_FAILED);
  }
  ~FreshPages() { munmap(data, bytes); }
  void* data;
  std::size_t bytes;
};

// Whether this kernel offers MADV_POPULATE_WRITE (Linux 5.14 on), tried on a page of its own.
bool kernel_populates() {
  FreshPages probe(static_cast<std::size_t>(sysconf(_SC_PAGESIZE)));
  return madvise(probe.data, probe.bytes, 23 /* MADV_POPULATE_WRITE */) == 0;
}

}  // namespace

TEST_CASE("populated pages are present before their first touch and keep their contents") {
  if (!kernel_populates()) {
    std::printf("skipped: this kernel has no MADV_POPULATE_WRITE (%s)\n", std::strerror(errno));
    return;
  }
  const std::size_t bytes = std::size_t{1} << 20;
  FreshPages fresh(bytes);
  const auto pages = bytes / static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  CHECK(resident_pages(fresh.data, bytes) == 0);
  populate_pages(fresh.data, bytes);
  CHECK(resident_pages(fresh.data, bytes) == pages);
  const auto* values = static_cast<const unsigned char*>(fresh.data);
  for (std::size_t i = 0; i < bytes; i += 4093) CHECK(values[i] == 0);

  // Populating memory already written keeps what was written.
  std::vector<float, AlignedAllocator<float>> written(bytes / sizeof(float));
  for (std::size_t i = 0; i < written.size(); ++i) written[i] = static_cast<float>(i);
  populate_pages(written.data(), bytes);
  for (std::size_t i = 0; i < written.size(); i += 997) CHECK(written[i] == static_cast<float>(i));
}

TEST_CASE("regions under the threshold are left to fault on first touch") {
  FreshPages fresh(kPopulateFromBytes);
  populate_pages(fresh.data, kPopulateFromBytes - 1);
  CHECK(resident_pages(fresh.data, kPopulateFromBytes) == 0);
}

TEST_CASE("large aligned buffers arrive with their pages present") {
  if (!kernel_populates()) {
    std::printf("skipped: this kernel has no MADV_POPULATE_WRITE\n");
    return;
  }
  // 64 MiB: above the highest mmap threshold glibc's malloc sets itself (32 MiB), so the buffer is fresh
  // pages that only population makes present.
  AlignedAllocator<float> allocator;
  const std::size_t count = std::size_t{16} << 20;
  float* buffer = allocator.allocate(count);
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const auto start = reinterpret_cast<std::size_t>(buffer);
  const auto begin = (start + page - 1) & ~(page - 1);
  const std::size_t bytes = ((start + count * sizeof(float)) & ~(page - 1)) - begin;
  CHECK(resident_pages(reinterpret_cast<void*>(begin), bytes) == bytes / page);
  allocator.deallocate(buffer, count);
}

}  // namespace psgrad
