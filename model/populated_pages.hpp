// Gives fresh memory its pages in one system call instead of one page fault each.
//
// On a virtual machine a page fault is dear: on this project's VM a first touch cost 10-14 µs a 4 KiB
// page, and the same pages made by madvise(MADV_POPULATE_WRITE) 0.45-1 µs. Embedding tables that fill up
// as a run trains, and their hash indexes, touch hundreds of megabytes of fresh memory in the first
// seconds: faulted page by page, that was most of a short run's table shard time.
#pragma once

#include <cstddef>

namespace psgrad {

// Regions smaller than this are left to fault: a system call per small allocation costs more than it saves.
inline constexpr std::size_t kPopulateFromBytes = std::size_t{64} << 10;

// Makes the whole pages inside [data, data + bytes) present and writable, when bytes >= kPopulateFromBytes.
// Contents are unchanged. A kernel without MADV_POPULATE_WRITE (before Linux 5.14) leaves them to fault.
void populate_pages(void* data, std::size_t bytes);

}  // namespace psgrad
