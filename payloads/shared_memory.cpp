// Segments are memfds: they vanish with the last process that maps them, so a killed process leaves
// nothing behind in /dev/shm. A receiver opens a sender's segment once through /proc/PID/fd/FD.
#include "payloads/shared_memory.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <tuple>
#include <variant>
#include <vector>

#include <fmt/format.h>

#include "payloads/recycling_allocator.hpp"

namespace psgrad {

namespace {

constexpr std::uint64_t segment_magic = 0x70736772'61645349;  // "psgradSI": slots with a holder
constexpr const char* segment_name = "psgrad-payloads";
constexpr std::uint32_t slots_per_segment = 32;
constexpr std::size_t max_segments = 8;
constexpr std::size_t page = 4096;
// Every segment is sealed at its size, and a peer's is mapped only when sealed so.
constexpr int size_seals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL;
// A slot still taken after this long belongs to a message that was never read (its receiver died)
// or to a reader that died holding it: it is reused, and a reader that comes after all sees the
// sequence change and refuses it. A live reader's slot is never reused. Tests shorten it.
std::atomic<std::int64_t> abandoned_after_ns{std::chrono::nanoseconds(std::chrono::seconds(60)).count()};

struct SegmentHeader {
  std::uint64_t magic;
  std::uint64_t key;
  std::uint64_t slots;
  std::uint64_t slot_bytes;
};

// One per slot, in the segment after the header; lock-free atomics work across processes.
struct alignas(64) SlotState {
  std::atomic<std::uint64_t> sequence;  // bumped before and after each write, and when taken
  std::atomic<std::uint32_t> busy;      // 1 from put until taken
  std::atomic<std::int64_t> claimed_ns;
  std::atomic<std::uint32_t> holder;    // the process reading it in place, 0 before it is taken
};
static_assert(std::atomic<std::uint64_t>::is_always_lock_free && std::atomic<std::uint32_t>::is_always_lock_free);

std::size_t round_up(std::size_t bytes, std::size_t to) { return (bytes + to - 1) / to * to; }

std::size_t states_offset() { return round_up(sizeof(SegmentHeader), 64); }
std::size_t data_offset(std::size_t slots) { return round_up(states_offset() + slots * sizeof(SlotState), page); }
std::size_t segment_bytes(std::size_t slots, std::size_t slot_bytes) { return data_offset(slots) + slots * slot_bytes; }

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// A mapped segment, ours or a peer's; unmapped when the last user lets go. Its geometry is kept here
// once checked, not read again from the header a peer could rewrite.
struct Mapping {
  void* base = nullptr;
  std::size_t length = 0;
  std::size_t slots = 0;
  std::size_t slot_bytes = 0;
  // Own segments only, per slot: whether this process holds it as a payload written in place
  // (reserve_in_shared_memory), and whether that payload was sent. In this process's memory, so no
  // peer can mark a slot free while this process still reads or writes it.
  std::unique_ptr<std::atomic<std::uint8_t>[]> held_here;
  ~Mapping() {
    if (base != nullptr) munmap(base, length);
  }
  SegmentHeader& header() const { return *static_cast<SegmentHeader*>(base); }
  SlotState& state(std::size_t slot) const {
    return reinterpret_cast<SlotState*>(static_cast<char*>(base) + states_offset())[slot];
  }
  char* slot_data(std::size_t slot) const {
    return static_cast<char*>(base) + data_offset(slots) + slot * slot_bytes;
  }
};

struct OwnSegment {
  int fd = -1;
  std::shared_ptr<Mapping> mapping;
};

std::atomic<bool> accepting{false};
std::atomic<std::uint64_t> put_count{0}, taken_count{0}, fallback_count{0}, in_place_count{0};

// held_here's states.
constexpr std::uint8_t not_held = 0, held_unsent = 1, held_sent = 2;

// Whether process `pid` still runs (0: nobody).
bool process_alive(std::uint32_t pid) {
  return pid != 0 && (kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM);
}

std::uint64_t random_key() {
  std::random_device device;
  return (static_cast<std::uint64_t>(device()) << 32) ^ device();
}

// This process's segments, each with slots of one size (made as payloads of new sizes come).
class Outbox {
 public:
  std::optional<SharedMemoryReference> put(const void* data, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& segment : segments_)
      if (auto reference = send_in_place(segment, data, bytes)) return reference;
    const auto claimed = claim_slot(bytes);
    if (!claimed) return std::nullopt;
    std::memcpy(claimed->segment->mapping->slot_data(claimed->slot), data, bytes);
    return written(*claimed->segment, claimed->slot);
  }

  std::shared_ptr<void> reserve(std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto claimed = claim_slot(bytes);
    return claimed ? held_in_place(*claimed->segment, claimed->slot) : nullptr;
  }

 private:
  struct Claimed {
    OwnSegment* segment;
    std::uint32_t slot;
  };

  // A free slot of at least `bytes`, claimed: in a segment of such slots, or in a new one.
  std::optional<Claimed> claim_slot(std::size_t bytes) {
    for (auto& segment : segments_)
      if (segment.mapping->slot_bytes >= bytes)
        if (auto slot = claim(segment)) return Claimed{&segment, *slot};
    if (segments_.size() >= max_segments && !retire_idle_segment()) return std::nullopt;
    auto segment = make_segment(round_up(bytes, page));
    if (!segment) return std::nullopt;
    segments_.push_back(std::move(*segment));
    const auto slot = claim(segments_.back());
    if (!slot) return std::nullopt;
    return Claimed{&segments_.back(), *slot};
  }

  // Makes room for a segment of another size: one with no payload waiting in it goes (peers that
  // mapped it keep their own mapping; no reference to it is outstanding).
  bool retire_idle_segment() {
    for (auto at = segments_.begin(); at != segments_.end(); ++at) {
      const auto& mapping = *at->mapping;
      bool idle = true;
      for (std::size_t slot = 0; slot < mapping.slots && idle; ++slot)
        idle = mapping.state(slot).busy.load(std::memory_order_acquire) == 0 &&
               mapping.held_here[slot].load(std::memory_order_acquire) == not_held;
      if (!idle) continue;
      close(at->fd);
      segments_.erase(at);
      return true;
    }
    return false;
  }

  static std::optional<OwnSegment> make_segment(std::size_t slot_bytes) {
    const int fd = memfd_create(segment_name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0) return std::nullopt;
    const auto length = segment_bytes(slots_per_segment, slot_bytes);
    // Sealed at its size: another process of this user that opens it through /proc cannot shrink it
    // under a mapping (every process mapping it would die by SIGBUS on the next touch of a lost page).
    if (ftruncate(fd, static_cast<off_t>(length)) != 0 || fcntl(fd, F_ADD_SEALS, size_seals) != 0) {
      close(fd);
      return std::nullopt;
    }
    void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
      close(fd);
      return std::nullopt;
    }
    auto mapping = std::make_shared<Mapping>();
    mapping->base = base;
    mapping->length = length;
    mapping->slots = slots_per_segment;
    mapping->slot_bytes = slot_bytes;
    mapping->held_here = std::make_unique<std::atomic<std::uint8_t>[]>(slots_per_segment);
    for (std::uint32_t slot = 0; slot < slots_per_segment; ++slot) mapping->held_here[slot].store(not_held);
    // A fresh memfd reads as zeros: every slot free, sequence 0.
    auto& header = mapping->header();
    header.key = random_key();
    header.slots = slots_per_segment;
    header.slot_bytes = slot_bytes;
    std::atomic_thread_fence(std::memory_order_release);
    header.magic = segment_magic;
    return OwnSegment{fd, std::move(mapping)};
  }

  // A free slot (neither held here nor waiting for or read by a receiver, unless abandoned), taken
  // for writing: a late reader of what it held before sees its sequence changed.
  static std::optional<std::uint32_t> claim(OwnSegment& segment) {
    const auto& mapping = *segment.mapping;
    const auto now = now_ns();
    const auto abandoned = abandoned_after_ns.load(std::memory_order_relaxed);
    for (std::uint32_t slot = 0; slot < mapping.slots; ++slot) {
      if (mapping.held_here[slot].load(std::memory_order_acquire) != not_held) continue;
      auto& state = mapping.state(slot);
      std::uint32_t free = 0;
      const bool claimed = state.busy.compare_exchange_strong(free, 1, std::memory_order_acq_rel) ||
                           (now - state.claimed_ns.load(std::memory_order_relaxed) > abandoned &&
                            !process_alive(state.holder.load(std::memory_order_acquire)));
      if (!claimed) continue;
      state.claimed_ns.store(now, std::memory_order_relaxed);
      state.holder.store(0, std::memory_order_relaxed);
      state.sequence.fetch_add(1, std::memory_order_acq_rel);
      return slot;
    }
    return std::nullopt;
  }

  // The reference a receiver takes a claimed slot's payload by, once it is written.
  static SharedMemoryReference written(const OwnSegment& segment, std::uint32_t slot) {
    const auto& mapping = *segment.mapping;
    auto& state = mapping.state(slot);
    state.claimed_ns.store(now_ns(), std::memory_order_relaxed);
    const auto sequence = state.sequence.fetch_add(1, std::memory_order_acq_rel) + 1;
    return SharedMemoryReference{static_cast<std::uint32_t>(getpid()), static_cast<std::uint32_t>(segment.fd),
                                 mapping.header().key, slot, sequence};
  }

  // A claimed slot this process writes in place; it holds the slot until the last copy of the result
  // is gone. Unsent by then, the slot is free again; sent, it is free once its receiver lets go too.
  static std::shared_ptr<void> held_in_place(const OwnSegment& segment, std::uint32_t slot) {
    auto& mapping = segment.mapping;
    mapping->held_here[slot].store(held_unsent, std::memory_order_release);
    return std::shared_ptr<void>(
        mapping->slot_data(slot),
        [mapping, slot](void*) {
          if (mapping->held_here[slot].exchange(not_held, std::memory_order_acq_rel) == held_unsent)
            mapping->state(slot).busy.store(0, std::memory_order_release);
        },
        RecyclingAllocator<char>{});
  }

  // `data` is the start of a slot held in place and not sent yet: it is sent as it is, to one receiver
  // (a second send of the same floats copies them, as any other payload).
  static std::optional<SharedMemoryReference> send_in_place(OwnSegment& segment, const void* data, std::size_t bytes) {
    const auto& mapping = *segment.mapping;
    const auto* first = mapping.slot_data(0);
    const auto* at = static_cast<const char*>(data);
    if (at < first || at >= first + mapping.slots * mapping.slot_bytes || bytes > mapping.slot_bytes) return std::nullopt;
    const auto offset = static_cast<std::size_t>(at - first);
    if (offset % mapping.slot_bytes != 0) return std::nullopt;
    const auto slot = static_cast<std::uint32_t>(offset / mapping.slot_bytes);
    auto unsent = held_unsent;
    if (!mapping.held_here[slot].compare_exchange_strong(unsent, held_sent, std::memory_order_acq_rel))
      return std::nullopt;
    in_place_count.fetch_add(1, std::memory_order_relaxed);
    return written(segment, slot);
  }

  std::mutex mutex_;
  std::vector<OwnSegment> segments_;  // kept open for the process's life: peers open them by fd
};

Outbox& outbox() {
  static Outbox box;
  return box;
}

// Peers' segments this process has mapped, by (pid, fd, key).
class PeerSegments {
 public:
  std::variant<std::shared_ptr<Mapping>, std::string> open(const SharedMemoryReference& reference) {
    const auto id = std::make_tuple(reference.pid, reference.fd, reference.key);
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto found = mapped_.find(id); found != mapped_.end()) return found->second;
    auto opened = map_peer(reference);
    if (auto* mapping = std::get_if<std::shared_ptr<Mapping>>(&opened)) {
      // Peers come and go over a long run: at most 64 stay mapped (a dropped one is mapped again if used).
      if (mapped_.size() >= 64) mapped_.erase(mapped_.begin());
      mapped_.emplace(id, *mapping);
    }
    return opened;
  }

 private:
  static std::variant<std::shared_ptr<Mapping>, std::string> map_peer(const SharedMemoryReference& reference) {
    const auto path = fmt::format("/proc/{}/fd/{}", reference.pid, reference.fd);
    // Only ever a psgrad memfd: opening an arbitrary file of another process could have effects.
    char target[256] = {};
    const auto length = readlink(path.c_str(), target, sizeof target - 1);
    const std::string expected = fmt::format("/memfd:{}", segment_name);
    if (length < 0 || std::strncmp(target, expected.c_str(), expected.size()) != 0)
      return fmt::format("{} is not a psgrad shared-memory segment on this host", path);
    const int fd = ::open(path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return fmt::format("cannot open {}: {}", path, std::strerror(errno));
    // Unsealed, a segment could shrink under the mapping; the sender seals every one at its size.
    const int seals = fcntl(fd, F_GET_SEALS);
    if (seals < 0 || (seals & F_SEAL_SHRINK) == 0) {
      close(fd);
      return fmt::format("{} is not sealed against shrinking", path);
    }
    struct stat status {};
    std::shared_ptr<Mapping> mapping;
    if (fstat(fd, &status) == 0 && S_ISREG(status.st_mode) &&
        static_cast<std::size_t>(status.st_size) >= data_offset(1)) {
      void* base = mmap(nullptr, static_cast<std::size_t>(status.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (base != MAP_FAILED) {
        mapping = std::make_shared<Mapping>();
        mapping->base = base;
        mapping->length = static_cast<std::size_t>(status.st_size);
      }
    }
    close(fd);
    if (!mapping) return fmt::format("cannot map {}", path);
    const auto& header = mapping->header();
    if (header.magic != segment_magic || header.key != reference.key)
      return fmt::format("{} is not the segment the reference names (key differs)", path);
    if (header.slots == 0 || header.slots > slots_per_segment || header.slot_bytes > mapping->length ||
        segment_bytes(header.slots, header.slot_bytes) > mapping->length)
      return fmt::format("{} has a malformed header", path);
    mapping->slots = header.slots;
    mapping->slot_bytes = header.slot_bytes;
    return mapping;
  }

  std::mutex mutex_;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>, std::shared_ptr<Mapping>> mapped_;
};

PeerSegments& peer_segments() {
  static PeerSegments segments;
  return segments;
}

}  // namespace

std::optional<SharedMemoryReference> put_in_shared_memory(const void* data, std::size_t bytes) {
  auto reference = outbox().put(data, bytes);
  (reference ? put_count : fallback_count).fetch_add(1, std::memory_order_relaxed);
  return reference;
}

std::shared_ptr<void> reserve_in_shared_memory(std::size_t bytes) { return outbox().reserve(bytes); }

std::variant<std::shared_ptr<const void>, std::string> hold_in_shared_memory(const SharedMemoryReference& reference,
                                                                           std::size_t bytes) {
  if (!accepts_shared_memory()) return std::string("this process does not take payloads through shared memory");
  auto opened = peer_segments().open(reference);
  if (auto* why = std::get_if<std::string>(&opened)) return *why;
  auto mapping = std::get<std::shared_ptr<Mapping>>(std::move(opened));
  if (reference.slot >= mapping->slots || bytes > mapping->slot_bytes)
    return fmt::format("slot {} of {} bytes is outside the segment", reference.slot, bytes);
  auto& state = mapping->state(reference.slot);
  auto expected = reference.sequence;
  // Taken: the sequence moves on, so the same reference is refused the next time. The acquire pairs
  // with the writer's release after its copy, so the floats read here are the ones it wrote.
  if (!state.sequence.compare_exchange_strong(expected, expected + 1, std::memory_order_acq_rel))
    return std::string("the slot was already taken or written again");
  state.holder.store(static_cast<std::uint32_t>(getpid()), std::memory_order_release);
  taken_count.fetch_add(1, std::memory_order_relaxed);
  const void* floats = mapping->slot_data(reference.slot);
  // The slot is the sender's again once the last holder of the floats lets go. The control block
  // comes from a recycled block, so a payload read in place allocates nothing once warmed up.
  return std::shared_ptr<const void>(
      floats,
      [mapping = std::move(mapping), slot = reference.slot](const void*) {
        auto& held = mapping->state(slot);
        held.holder.store(0, std::memory_order_relaxed);
        held.busy.store(0, std::memory_order_release);
      },
      RecyclingAllocator<char>{});
}

void shorten_shared_memory_abandon_time(std::chrono::nanoseconds after) {
  abandoned_after_ns.store(after.count(), std::memory_order_relaxed);
}

void accept_shared_memory(bool accept) { accepting.store(accept); }
bool accepts_shared_memory() { return accepting.load(); }

SharedMemoryCounts shared_memory_counts() {
  return SharedMemoryCounts{put_count.load(), taken_count.load(), fallback_count.load(), in_place_count.load()};
}

}  // namespace psgrad
