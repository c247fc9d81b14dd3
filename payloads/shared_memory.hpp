// Payloads between processes on one host through shared memory: the sender writes a buffer into a
// slot of its own memfd (computes it there, or copies it in) and the message carries only the slot's
// reference; the receiver computes on the floats where they are and frees the slot when done. Over
// loopback TCP the same buffer is copied six or seven times (by CAF's serializer, the kernel twice,
// CAF's read buffer, its BASP worker, the deserializer); here once at most.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>

namespace psgrad {

// Where a payload waits: slot `slot` of segment `fd` of process `pid`, written as `sequence`. `key`
// is the segment's random key, so a reference to any other file is refused. `checksum` is the
// payload's (payload_checksum.hpp) as its sender wrote it: the segment is a file any process of the
// user can open and write, so its receiver checks the bytes against it (FloatBuffer's reader does).
struct SharedMemoryReference {
  std::uint32_t pid = 0;
  std::uint32_t fd = 0;
  std::uint64_t key = 0;
  std::uint32_t slot = 0;
  std::uint64_t sequence = 0;
  std::uint64_t checksum = 0;
};

// What two processes must share to reach each other's memory this way: the boot, the user, and the
// network and process namespaces (a simulated host is its own network namespace, and its traffic must
// cross its simulated link). Empty when this process cannot tell (then it never uses shared memory).
std::string shared_memory_host_identity();

// Copies `bytes` into a free slot of this process's shared memory (or, when `data` is a slot reserved
// below and not sent yet, sends that slot as it is). Empty when no slot is free (a
// receiver slow to take its payloads, or gone) or the memory cannot be made: the caller then sends
// the bytes inline.
std::optional<SharedMemoryReference> put_in_shared_memory(const void* data, std::size_t bytes);

// A free slot of at least `bytes` for a payload written in place: the caller writes it at the returned
// pointer, and put_in_shared_memory of that pointer (once, for one receiver) then passes the slot on
// without a copy. The slot is this process's while the result lives; sent, it is free once the
// receiver lets go of it too. Empty when no slot is free or the memory cannot be made.
std::shared_ptr<void> reserve_in_shared_memory(std::size_t bytes);

// Takes the referenced slot's first `bytes` for reading in place: the result points at them, and the
// slot stays the reader's (the sender does not write it, not even after a long time, while this
// process lives) until the last copy of the result is gone. A reference that is not this host's,
// names no psgrad segment, or whose slot was taken or reused is refused with the reason.
std::variant<std::shared_ptr<const void>, std::string> hold_in_shared_memory(const SharedMemoryReference& reference,
                                                                           std::size_t bytes);

// For tests: how long a slot may stay taken by a message never read (or a reader that died) before
// its sender reuses it; 60 s unless shortened.
void shorten_shared_memory_abandon_time(std::chrono::nanoseconds after);

// Whether this process takes payloads by reference at all: off until a command that talks to peers
// on this host turns it on (cluster.shared_memory), so a process that never offered it refuses a
// forged reference without touching another process's files.
void accept_shared_memory(bool accept);
bool accepts_shared_memory();

// Payloads this process put into or took from shared memory so far (for the run's log and tests).
struct SharedMemoryCounts {
  std::uint64_t put = 0;
  std::uint64_t taken = 0;
  std::uint64_t inline_fallbacks = 0;  // put asked for, no slot free
  std::uint64_t in_place = 0;          // of those put, sent from the slot they were written in
};
SharedMemoryCounts shared_memory_counts();
// Those counts for a process's last log line ("through shared memory: ..."), empty when none.
std::string shared_memory_note();
// `line`, followed by "; " and that note when there is one.
std::string with_shared_memory_note(const std::string& line);

}  // namespace psgrad
