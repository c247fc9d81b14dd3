// Table rows (a pull's answer, a push's row gradients) that cross to a process on this host through
// one slot of shared memory instead of the network: over loopback TCP a batch's half megabyte of rows
// is copied by CAF's serializer, the kernel twice, CAF's buffers and the deserializer; here it is
// written into the slot once and read out of it once.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "payloads/shared_memory.hpp"

namespace psgrad {

struct TableRows;

// Where the rows wait, and how many bytes of the slot they take.
struct SharedRowsReference {
  SharedMemoryReference slot;
  std::uint64_t bytes = 0;
};

// The largest list of rows sent this way; a larger one (a whole table, say) goes inline.
constexpr std::uint64_t max_shared_rows_bytes = std::uint64_t{64} << 20;

// Writes `tables` into a free slot of this process's shared memory, its checksum taken. Empty when they
// are larger than max_shared_rows_bytes or no slot is free: the caller sends them inline.
std::optional<SharedRowsReference> put_rows_in_shared_memory(const std::vector<TableRows>& tables);

// Reads the referenced slot's rows into `tables` and lets the slot go. The slot is a file other
// processes of the user can write, so a reference that cannot be taken, bytes that fail the checksum,
// or a layout that does not fit its bytes leave `tables` empty and return why; empty when taken.
std::string take_rows_from_shared_memory(const SharedRowsReference& where, std::vector<TableRows>& tables);

}  // namespace psgrad
