// Payloads through shared memory: a reference is taken once, byte for byte, also from another
// process; forged or stale references are refused; a FloatBuffer marked for it crosses as a reference,
// and one whose slot was written after its sender's checksum arrives refused.
#include <doctest/doctest.h>

#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "actors/actor_config.hpp"
#include "payloads/float_buffer.hpp"
#include "payloads/messages.hpp"
#include "payloads/shared_memory.hpp"
#include "message_bytes.hpp"

namespace psgrad {
namespace {

std::vector<float> awkward_floats(std::size_t count) {
  std::vector<float> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i) * 0.25f - 3.0f;
  values[0] = std::numeric_limits<float>::quiet_NaN();
  values[1] = -0.0f;
  values[2] = std::numeric_limits<float>::infinity();
  values[3] = std::numeric_limits<float>::denorm_min();
  return values;
}

// What hold_in_shared_memory gave (copied out, the slot then let go), or why it refused.
struct Taken {
  std::vector<float> values;
  std::optional<std::string> refused;
  bool read = false;
};

Taken take(const SharedMemoryReference& reference, std::size_t count) {
  Taken taken;
  taken.values.resize(count);
  auto held = hold_in_shared_memory(reference, count * sizeof(float));
  if (auto* refused = std::get_if<std::string>(&held)) {
    taken.refused = *refused;
    return taken;
  }
  taken.read = true;
  std::memcpy(taken.values.data(), std::get<std::shared_ptr<const void>>(held).get(), count * sizeof(float));
  return taken;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Accepting {
  Accepting() { accept_shared_memory(true); }
  ~Accepting() { accept_shared_memory(false); }
};

}  // namespace

TEST_CASE("a payload put in shared memory is taken once, bit for bit") {
  const Accepting accepting;
  const auto values = awkward_floats(1000);
  const auto before = shared_memory_counts();
  const auto reference = put_in_shared_memory(values.data(), values.size() * sizeof(float));
  REQUIRE(reference.has_value());
  const auto first = take(*reference, values.size());
  REQUIRE_FALSE(first.refused.has_value());
  CHECK(same_bits(first.values, values));
  const auto second = take(*reference, values.size());
  REQUIRE(second.refused.has_value());
  CHECK(second.refused->find("already taken") != std::string::npos);
  CHECK_FALSE(second.read);
  const auto after = shared_memory_counts();
  CHECK(after.put == before.put + 1);
  CHECK(after.taken == before.taken + 1);
}

TEST_CASE("a slot taken is reused, so steady traffic needs no new memory") {
  const Accepting accepting;
  const auto values = awkward_floats(50000);
  std::optional<SharedMemoryReference> first;
  for (int round = 0; round < 200; ++round) {
    const auto reference = put_in_shared_memory(values.data(), values.size() * sizeof(float));
    REQUIRE(reference.has_value());
    if (!first) first = reference;
    CHECK(reference->fd == first->fd);  // the same segment all along
    const auto taken = take(*reference, values.size());
    REQUIRE_FALSE(taken.refused.has_value());
  }
}

namespace {

// Puts `values` until no slot is free and says whether any put landed in `slot`; every put is taken again.
bool puts_reach(const std::vector<float>& values, const SharedMemoryReference& slot) {
  std::vector<SharedMemoryReference> waiting;
  for (int k = 0; k < 5000; ++k) {
    auto reference = put_in_shared_memory(values.data(), values.size() * sizeof(float));
    if (!reference) break;
    waiting.push_back(*reference);
  }
  bool reached = false;
  for (const auto& reference : waiting) {
    reached = reached || (reference.fd == slot.fd && reference.slot == slot.slot);
    CHECK_FALSE(take(reference, values.size()).refused.has_value());
  }
  return reached;
}

}  // namespace

TEST_CASE("a payload read in place keeps its slot until the last holder lets go") {
  const Accepting accepting;
  const auto values = awkward_floats(5000);
  const auto reference = put_in_shared_memory(values.data(), values.size() * sizeof(float));
  REQUIRE(reference.has_value());
  auto held = hold_in_shared_memory(*reference, values.size() * sizeof(float));
  REQUIRE(std::holds_alternative<std::shared_ptr<const void>>(held));
  auto floats = std::get<std::shared_ptr<const void>>(held);
  auto copy = floats;
  held = std::string();
  const std::vector<float> other(values.size(), 7.0f);
  CHECK_FALSE(puts_reach(other, *reference));  // every other slot filled; this one left alone
  CHECK(std::memcmp(floats.get(), values.data(), values.size() * sizeof(float)) == 0);
  floats.reset();
  CHECK_FALSE(puts_reach(other, *reference));  // one holder is left
  copy.reset();
  CHECK(puts_reach(other, *reference));
}

TEST_CASE("a payload written in a reserved slot is sent from it once, without a copy") {
  const Accepting accepting;
  const auto values = awkward_floats(4000);
  const std::size_t bytes = values.size() * sizeof(float);
  auto slot = reserve_in_shared_memory(bytes);
  REQUIRE(slot != nullptr);
  std::memcpy(slot.get(), values.data(), bytes);
  const auto before = shared_memory_counts();
  const auto sent = put_in_shared_memory(slot.get(), bytes);
  REQUIRE(sent.has_value());
  CHECK(shared_memory_counts().in_place == before.in_place + 1);
  // A second send of the same floats is a copy into another slot.
  const auto again = put_in_shared_memory(slot.get(), bytes);
  REQUIRE(again.has_value());
  CHECK(shared_memory_counts().in_place == before.in_place + 1);
  CHECK_FALSE((again->fd == sent->fd && again->slot == sent->slot));
  CHECK(same_bits(take(*again, values.size()).values, values));
  // The receiver reads the very floats written; its letting go does not free the slot while the
  // writer still holds it, nor does the writer's while the receiver reads.
  auto held = hold_in_shared_memory(*sent, bytes);
  REQUIRE(std::holds_alternative<std::shared_ptr<const void>>(held));
  auto floats = std::get<std::shared_ptr<const void>>(held);
  CHECK(std::memcmp(floats.get(), values.data(), bytes) == 0);
  const std::vector<float> other(values.size(), 5.0f);
  held = std::string();
  floats.reset();
  CHECK_FALSE(puts_reach(other, *sent));
  CHECK(std::memcmp(slot.get(), values.data(), bytes) == 0);
  slot.reset();
  CHECK(puts_reach(other, *sent));

  auto second = reserve_in_shared_memory(bytes);
  REQUIRE(second != nullptr);
  const auto reference = put_in_shared_memory(second.get(), bytes);
  REQUIRE(reference.has_value());
  second.reset();
  auto reader = hold_in_shared_memory(*reference, bytes);
  REQUIRE(std::holds_alternative<std::shared_ptr<const void>>(reader));
  CHECK_FALSE(puts_reach(other, *reference));
  reader = std::string();
  CHECK(puts_reach(other, *reference));
}

TEST_CASE("a reserved slot never sent is free again once let go") {
  const Accepting accepting;
  const std::size_t bytes = 2000 * sizeof(float);
  std::vector<std::shared_ptr<void>> reserved;
  for (int k = 0; k < 1000; ++k) {
    auto slot = reserve_in_shared_memory(bytes);
    if (!slot) break;
    reserved.push_back(std::move(slot));
  }
  REQUIRE(reserved.size() > 1);
  REQUIRE(reserved.size() < 1000);  // every slot held: none is left
  CHECK(reserve_in_shared_memory(bytes) == nullptr);
  void* const where = reserved[reserved.size() / 2].get();
  reserved[reserved.size() / 2].reset();
  auto again = reserve_in_shared_memory(bytes);
  CHECK(again.get() == where);
  again.reset();
  reserved.clear();
  const std::vector<float> values(2000, 3.0f);
  const auto reference = put_in_shared_memory(values.data(), bytes);
  REQUIRE(reference.has_value());
  CHECK_FALSE(take(*reference, values.size()).refused.has_value());
}

TEST_CASE("a slot whose reader died is reused after a while, and one a live reader holds never is") {
  const Accepting accepting;
  // Long enough that the thousands of puts in puts_reach finish within it on a loaded 2-core machine (at
  // 20 ms its own earlier puts counted as abandoned there and were reused before it took them).
  shorten_shared_memory_abandon_time(std::chrono::milliseconds(400));
  const auto values = awkward_floats(3000);
  const std::vector<float> other(values.size(), -2.0f);
  // Held here, by a live process, for ten times that long.
  const auto mine = put_in_shared_memory(values.data(), values.size() * sizeof(float));
  REQUIRE(mine.has_value());
  auto held = hold_in_shared_memory(*mine, values.size() * sizeof(float));
  REQUIRE(std::holds_alternative<std::shared_ptr<const void>>(held));
  usleep(4000 * 1000);
  CHECK_FALSE(puts_reach(other, *mine));
  CHECK(std::memcmp(std::get<std::shared_ptr<const void>>(held).get(), values.data(),
                    values.size() * sizeof(float)) == 0);
  // Held by a child that exits without letting go.
  const auto theirs = put_in_shared_memory(values.data(), values.size() * sizeof(float));
  REQUIRE(theirs.has_value());
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    auto in_child = hold_in_shared_memory(*theirs, values.size() * sizeof(float));
    _exit(std::holds_alternative<std::shared_ptr<const void>>(in_child) ? 0 : 1);
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(take(*theirs, values.size()).refused.has_value());  // the child took it
  usleep(500 * 1000);
  CHECK(puts_reach(other, *theirs));
  shorten_shared_memory_abandon_time(std::chrono::seconds(60));
}

TEST_CASE("a forged or mistaken shared-memory reference is refused without reading") {
  const Accepting accepting;
  const auto values = awkward_floats(64);
  const auto reference = put_in_shared_memory(values.data(), values.size() * sizeof(float));
  REQUIRE(reference.has_value());
  auto forged = *reference;
  forged.key ^= 1;
  auto refused = take(forged, values.size());
  CHECK(refused.refused.has_value());
  CHECK_FALSE(refused.read);
  forged = *reference;
  forged.slot = 1000;
  CHECK(take(forged, values.size()).refused.has_value());
  forged = *reference;
  forged.sequence += 2;
  CHECK(take(forged, values.size()).refused.has_value());
  CHECK(take(*reference, std::size_t{1} << 26).refused.has_value());  // larger than its slot
  forged = *reference;
  forged.pid = 0x7ffffff0;  // no such process
  CHECK(take(forged, values.size()).refused.has_value());
  // A file that is not a psgrad segment, though this process holds it open.
  const int other = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  REQUIRE(other >= 0);
  forged = *reference;
  forged.fd = static_cast<std::uint32_t>(other);
  refused = take(forged, values.size());
  REQUIRE(refused.refused.has_value());
  CHECK(refused.refused->find("not a psgrad shared-memory segment") != std::string::npos);
  close(other);
  // The genuine reference still works after all that.
  const auto taken = take(*reference, values.size());
  REQUIRE_FALSE(taken.refused.has_value());
  CHECK(same_bits(taken.values, values));
}

TEST_CASE("a forged shared-memory reference to 2^28 floats is refused before anything is allocated") {
  ActorConfig config{1};
  caf::actor_system system{config};
  const auto values = awkward_floats(64);
  std::optional<SharedMemoryReference> genuine;
  {
    const Accepting accepting;
    genuine = put_in_shared_memory(values.data(), values.size() * sizeof(float));
  }
  REQUIRE(genuine.has_value());
  // A 57-byte message naming a 1 GiB payload: in a process that takes no shared memory, in a slot
  // too small, and in a process that does not exist. Each arrives refused, with nothing allocated.
  auto forged_bytes = [&](SharedMemoryReference where) {
    std::vector<char> bytes;
    caf::binary_serializer sink{system, bytes};
    std::uint32_t magic = shared_buffer_magic;
    std::uint64_t count = max_float_buffer_size;
    std::uint8_t encoding = 0;
    REQUIRE_FALSE(
        sink(magic, count, encoding, where.pid, where.fd, where.key, where.slot, where.sequence, where.checksum));
    return bytes;
  };
  auto nowhere = *genuine;
  nowhere.pid = 0x7ffffff0;
  const auto before = mallinfo2();
  for (const bool accepting : {false, true}) {
    accept_shared_memory(accepting);
    for (const auto& where : {*genuine, nowhere}) {
      FloatBuffer arrived;
      REQUIRE_FALSE(testing::deserialize(system, forged_bytes(where), arrived));
      CHECK(arrived.refused());
      CHECK(arrived.empty());
    }
  }
  accept_shared_memory(false);
  const auto after = mallinfo2();
  const auto held = [](const struct mallinfo2& info) { return info.uordblks + info.hblkhd; };
  CHECK(held(after) < held(before) + (std::size_t{64} << 20));
  const Accepting accepting;
  CHECK_FALSE(take(*genuine, values.size()).refused.has_value());  // still there, untouched
}

TEST_CASE("a process that does not take shared memory refuses every reference") {
  const auto values = awkward_floats(16);
  const auto reference = put_in_shared_memory(values.data(), values.size() * sizeof(float));
  REQUIRE(reference.has_value());
  accept_shared_memory(false);
  const auto refused = take(*reference, values.size());
  CHECK(refused.refused.has_value());
  CHECK_FALSE(refused.read);
  const Accepting accepting;
  CHECK_FALSE(take(*reference, values.size()).refused.has_value());
}

TEST_CASE("with every slot waiting to be taken, a put gives nothing and the payload goes inline") {
  const Accepting accepting;
  const std::vector<float> values(8, 1.5f);
  std::vector<SharedMemoryReference> waiting;
  const auto before = shared_memory_counts();
  bool ran_out = false;
  for (int k = 0; k < 2000 && !ran_out; ++k) {
    auto reference = put_in_shared_memory(values.data(), values.size() * sizeof(float));
    if (reference) waiting.push_back(*reference);
    else ran_out = true;
  }
  CHECK(ran_out);
  CHECK(shared_memory_counts().inline_fallbacks == before.inline_fallbacks + 1);
  // A FloatBuffer marked for shared memory then still arrives, as bytes in the message.
  ActorConfig config{1};
  caf::actor_system system{config};
  const auto buffer = FloatBuffer::copy_of(values.data(), values.size()).through_shared_memory();
  const auto bytes = testing::serialize(system, buffer);
  CHECK(bytes.size() >= values.size() * sizeof(float));
  FloatBuffer arrived;
  REQUIRE_FALSE(testing::deserialize(system, bytes, arrived));
  CHECK(arrived == buffer);
  CHECK_FALSE(arrived.arrived_through_shared_memory());
  for (const auto& reference : waiting) CHECK_FALSE(take(reference, values.size()).refused.has_value());
}

TEST_CASE("a float buffer marked for shared memory crosses as a reference and arrives equal") {
  const Accepting accepting;
  ActorConfig config{1};
  caf::actor_system system{config};
  const auto values = awkward_floats(118282);
  for (const auto wire : {WireEncoding::fp32, WireEncoding::bf16}) {
    CAPTURE(wire_name(wire));
    const Weights weights{7, 0xabc, FloatBuffer(std::make_shared<const AlignedFloats>(values.begin(), values.end()), wire)
                                        .through_shared_memory()};
    const auto bytes = testing::serialize(system, weights);
    CHECK(bytes.size() < 100);  // the reference, not 473 KB of floats
    Weights arrived;
    REQUIRE_FALSE(testing::deserialize(system, bytes, arrived));
    CHECK(arrived.version == 7);
    CHECK(arrived.values == weights.values);
    CHECK(arrived.values.encoding() == wire);
    CHECK(arrived.values.arrived_through_shared_memory());
    CHECK_FALSE(arrived.values.marked_for_shared_memory());  // an answer is marked by whoever sends it
    // The same bytes once more: the slot was taken, so the payload arrives refused, not read stale.
    Weights again;
    REQUIRE_FALSE(testing::deserialize(system, bytes, again));
    CHECK(again.values.refused());
    CHECK(again.values.empty());
    CHECK(again.values.refusal("weights") ==
          "shared-memory weights was refused: the slot was already taken or written again");
  }
  // Unmarked, the floats travel in the message as before.
  const auto inline_bytes = testing::serialize(system, FloatBuffer::copy_of(values.data(), values.size()));
  CHECK(inline_bytes.size() >= values.size() * sizeof(float));
}

TEST_CASE("a float buffer computed in a reserved slot crosses without a copy and arrives equal") {
  const Accepting accepting;
  ActorConfig config{1};
  caf::actor_system system{config};
  const auto values = awkward_floats(118282);
  auto slot = reserve_in_shared_memory(values.size() * sizeof(float));
  REQUIRE(slot != nullptr);
  auto* floats = static_cast<float*>(slot.get());
  std::copy(values.begin(), values.end(), floats);
  const auto before = shared_memory_counts();
  const auto buffer = FloatBuffer(std::shared_ptr<const float>(slot, floats), values.size()).through_shared_memory();
  slot.reset();
  const auto bytes = testing::serialize(system, buffer);
  CHECK(bytes.size() < 100);
  CHECK(shared_memory_counts().in_place == before.in_place + 1);
  FloatBuffer arrived;
  REQUIRE_FALSE(testing::deserialize(system, bytes, arrived));
  CHECK(std::memcmp(arrived.data(), values.data(), values.size() * sizeof(float)) == 0);
}

TEST_CASE("a payload another process put in shared memory is taken here, bit for bit") {
  const Accepting accepting;
  const auto values = awkward_floats(30000);
  int to_parent[2], to_child[2];
  REQUIRE(pipe(to_parent) == 0);
  REQUIRE(pipe(to_child) == 0);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child puts the payload, says where, and lives until the parent has taken it.
    const auto reference = put_in_shared_memory(values.data(), values.size() * sizeof(float));
    const SharedMemoryReference where = reference.value_or(SharedMemoryReference{});
    const bool written = write(to_parent[1], &where, sizeof where) == static_cast<ssize_t>(sizeof where);
    char done = 0;
    const bool heard = read(to_child[0], &done, 1) == 1;
    _exit(reference && written && heard ? 0 : 1);
  }
  SharedMemoryReference where;
  REQUIRE(read(to_parent[0], &where, sizeof where) == static_cast<ssize_t>(sizeof where));
  CHECK(where.pid == static_cast<std::uint32_t>(child));
  const auto taken = take(where, values.size());
  CHECK_FALSE(taken.refused.has_value());
  CHECK(same_bits(taken.values, values));
  const char done = 1;
  CHECK(write(to_child[1], &done, 1) == 1);
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) close(fd);
}

TEST_CASE("processes share memory only with the same boot, user and namespaces") {
  const auto here = shared_memory_host_identity();
  REQUIRE_FALSE(here.empty());
  CHECK(here == shared_memory_host_identity());
  // boot id / uid / network namespace / process namespace
  CHECK(std::count(here.begin(), here.end(), '/') == 3);
  CHECK(here.find(std::to_string(getuid())) != std::string::npos);
}

TEST_CASE("a segment is sealed at its size: another process of the user cannot shrink it under a mapping") {
  const Accepting accepting;
  const auto values = awkward_floats(256);
  const auto reference = put_in_shared_memory(values.data(), values.size() * sizeof(float));
  REQUIRE(reference.has_value());
  // As another process of the same user would: through /proc, with write access.
  const auto path = "/proc/self/fd/" + std::to_string(reference->fd);
  const int outsider = open(path.c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(outsider >= 0);
  CHECK(ftruncate(outsider, 0) != 0);
  CHECK(errno == EPERM);
  close(outsider);
  const auto taken = take(*reference, values.size());
  REQUIRE_FALSE(taken.refused.has_value());
  CHECK(same_bits(taken.values, values));
}

TEST_CASE("a segment that is not sealed against shrinking is refused before it is mapped") {
  const Accepting accepting;
  const int unsealed = memfd_create("psgrad-payloads", MFD_CLOEXEC);
  REQUIRE(unsealed >= 0);
  REQUIRE(ftruncate(unsealed, 1 << 20) == 0);
  SharedMemoryReference forged{static_cast<std::uint32_t>(getpid()), static_cast<std::uint32_t>(unsealed), 1, 0, 1};
  const auto refused = take(forged, 64);
  REQUIRE(refused.refused.has_value());
  CHECK(refused.refused->find("not sealed against shrinking") != std::string::npos);
  CHECK_FALSE(refused.read);
  close(unsealed);
}

}  // namespace psgrad

namespace psgrad {
namespace {

// As another process of the user would, through /proc and `dd`: writes `byte` over the payload slots
// of every segment this process has (all but the first page, which holds the header and the slots'
// states). Returns how many segments it wrote.
int overwrite_own_segments(unsigned char byte) {
  int written = 0;
  DIR* fds = opendir("/proc/self/fd");
  REQUIRE(fds != nullptr);
  while (const dirent* entry = readdir(fds)) {
    const std::string path = std::string("/proc/self/fd/") + entry->d_name;
    char target[256] = {};
    if (readlink(path.c_str(), target, sizeof target - 1) < 0) continue;
    if (std::string(target).rfind("/memfd:psgrad-payloads", 0) != 0) continue;
    const int outsider = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    REQUIRE(outsider >= 0);
    const off_t size = lseek(outsider, 0, SEEK_END);
    const std::vector<unsigned char> garbage(static_cast<std::size_t>(size) - 4096, byte);
    CHECK(pwrite(outsider, garbage.data(), garbage.size(), 4096) == static_cast<ssize_t>(garbage.size()));
    close(outsider);
    ++written;
  }
  closedir(fds);
  return written;
}

// The reference a FloatBuffer's message carries.
SharedMemoryReference reference_in(caf::actor_system& system, const std::vector<char>& message) {
  caf::binary_deserializer source{system, message};
  std::uint32_t magic = 0;
  std::uint64_t count = 0;
  std::uint8_t encoding = 0;
  SharedMemoryReference where;
  REQUIRE_FALSE(source(magic, count, encoding, where.pid, where.fd, where.key, where.slot, where.sequence, where.checksum));
  REQUIRE(magic == shared_buffer_magic);
  return where;
}

}  // namespace

TEST_CASE("a payload whose slot was written after its sender's checksum arrives refused, and its slot is let go") {
  const Accepting accepting;
  ActorConfig config{1};
  caf::actor_system system{config};
  const auto values = awkward_floats(118282);
  const std::size_t bytes = values.size() * sizeof(float);
  const std::string failed = "shared-memory gradient failed its checksum (its bytes were changed after its sender "
                             "wrote them)";
  // Computed in a slot and checksummed when complete, then changed before it is sent: one NaN.
  std::vector<char> in_place_message;
  {
    auto slot = reserve_in_shared_memory(bytes);
    REQUIRE(slot != nullptr);
    auto* floats = static_cast<float*>(slot.get());
    std::copy(values.begin(), values.end(), floats);
    const auto in_place = FloatBuffer(std::shared_ptr<const float>(slot, floats), values.size()).with_checksum();
    floats[values.size() / 2] = std::numeric_limits<float>::quiet_NaN();
    in_place_message = testing::serialize(system, in_place.through_shared_memory());
  }  // the sender lets go of its slot, as a worker does once its push is sent
  std::vector<SharedMemoryReference> refused{reference_in(system, in_place_message)};
  FloatBuffer arrived;
  REQUIRE_FALSE(testing::deserialize(system, in_place_message, arrived));
  CHECK(arrived.refused());
  CHECK(arrived.empty());
  CHECK(arrived.refusal("gradient") == failed);

  // Copied into a slot as it is sent; then every payload slot of this process is overwritten with NaN
  // (0xff bytes) and with zeros, as another process could through /proc.
  const auto copied = FloatBuffer::copy_of(values.data(), values.size()).through_shared_memory();
  for (const unsigned char byte : {0xff, 0x00}) {
    CAPTURE(int(byte));
    const auto message = testing::serialize(system, copied);
    REQUIRE(message.size() < 100);
    refused.push_back(reference_in(system, message));
    CHECK(overwrite_own_segments(byte) >= 1);
    FloatBuffer overwritten;
    REQUIRE_FALSE(testing::deserialize(system, message, overwritten));
    CHECK(overwritten.refused());
    CHECK(overwritten.refusal("gradient") == failed);
  }
  // The refused slots were let go, and the same payload sent afresh arrives whole.
  const std::vector<float> other(1000, 2.0f);
  for (const auto& reference : refused) CHECK(puts_reach(other, reference));
  FloatBuffer whole;
  REQUIRE_FALSE(testing::deserialize(system, testing::serialize(system, copied), whole));
  REQUIRE_FALSE(whole.refused());
  CHECK(whole.arrived_through_shared_memory());
  CHECK(whole == copied);
}

}  // namespace psgrad
