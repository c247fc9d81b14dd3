// Table rows through shared memory: a pull's answer or a push marked for a peer on this host crosses as
// a slot's reference and arrives equal; unmarked rows go inline; a reference taken twice, bytes changed
// after the checksum, a slot whose layout does not fit its bytes, or a receiver that does not take
// shared memory give no rows and a reason, never a crash.
#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "caf/actor_system.hpp"
#include "caf/binary_serializer.hpp"
#include "actors/actor_config.hpp"
#include "payloads/payload_checksum.hpp"
#include "payloads/shared_memory.hpp"
#include "payloads/shared_rows.hpp"
#include "payloads/sparse_messages.hpp"
#include "message_bytes.hpp"

namespace psgrad {
namespace {

struct Accepting {
  Accepting() { accept_shared_memory(true); }
  ~Accepting() { accept_shared_memory(false); }
};

// Two tables of awkward rows (NaN, -0, infinity among them), the second with an odd float count.
std::vector<TableRows> awkward_tables() {
  std::vector<TableRows> tables;
  SparseRows first({3, 17, 90000000000ull}, 4);
  for (std::size_t i = 0; i < first.values.size(); ++i) first.values[i] = static_cast<float>(i) * 0.5f - 1.0f;
  first.values[0] = std::numeric_limits<float>::quiet_NaN();
  first.values[1] = -0.0f;
  first.values[2] = std::numeric_limits<float>::infinity();
  tables.push_back(TableRows{2, first});
  SparseRows second({5}, 3);
  second.values = {1.0f, 2.0f, 3.0f};
  tables.push_back(TableRows{7, second});
  return tables;
}

bool same_rows(const std::vector<TableRows>& a, const std::vector<TableRows>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t t = 0; t < a.size(); ++t) {
    const auto& x = a[t].rows;
    const auto& y = b[t].rows;
    if (a[t].table != b[t].table || x.width != y.width || x.keys != y.keys || x.values.size() != y.values.size())
      return false;
    if (!x.values.empty() && std::memcmp(x.values.data(), y.values.data(), x.values.size() * sizeof(float)) != 0)
      return false;
  }
  return true;
}

// A pull answer's message (version 9) whose rows are said to wait at `where`.
std::vector<char> answer_message(caf::actor_system& system, const SharedRowsReference& where) {
  std::vector<char> bytes;
  caf::binary_serializer sink{system, bytes};
  std::uint64_t version = 9;
  std::uint8_t route = 1;
  auto reference = where;
  REQUIRE_FALSE(sink(version, route, reference.slot.pid, reference.slot.fd, reference.slot.key, reference.slot.slot,
                     reference.slot.sequence, reference.slot.checksum, reference.bytes));
  return bytes;
}

}  // namespace

TEST_CASE("a pull's answer marked for shared memory crosses as a reference and arrives bit for bit") {
  const Accepting accepting;
  ActorConfig config{1};
  caf::actor_system system{config};
  PulledRows answer{9, awkward_tables()};
  answer.through_shared_memory = true;
  const auto before = shared_memory_counts();
  const auto message = testing::serialize(system, answer);
  CHECK(message.size() < 64);  // the header and the reference, none of the rows
  CHECK(shared_memory_counts().put == before.put + 1);
  PulledRows arrived;
  REQUIRE_FALSE(testing::deserialize(system, message, arrived));
  CHECK(arrived.refusal.empty());
  CHECK(arrived.version == 9);
  CHECK(same_rows(arrived.tables, answer.tables));
  // Taken once: the same message again gives no rows and says why.
  PulledRows again;
  REQUIRE_FALSE(testing::deserialize(system, message, again));
  CHECK(again.tables.empty());
  CHECK(again.refusal.find("already taken") != std::string::npos);
}

TEST_CASE("a push marked for shared memory arrives with its rows and sums of squares") {
  const Accepting accepting;
  ActorConfig config{1};
  caf::actor_system system{config};
  RowPush push{4, 1, awkward_tables(), {2.5, std::numeric_limits<double>::infinity()}};
  push.through_shared_memory = true;
  RowPush arrived;
  REQUIRE_FALSE(testing::deserialize(system, testing::serialize(system, push), arrived));
  CHECK(arrived.refusal.empty());
  CHECK(arrived.version == 4);
  CHECK(arrived.worker == 1);
  CHECK(same_rows(arrived.tables, push.tables));
  CHECK(arrived.squares == push.squares);
}

TEST_CASE("rows not marked for shared memory, or with no rows, cross inline") {
  const Accepting accepting;
  ActorConfig config{1};
  caf::actor_system system{config};
  const auto before = shared_memory_counts();
  PulledRows inline_answer{3, awkward_tables()};
  const auto message = testing::serialize(system, inline_answer);
  CHECK(message.size() > 15 * sizeof(float));
  PulledRows empty_answer{3, {}};
  empty_answer.through_shared_memory = true;
  PulledRows arrived, arrived_empty;
  REQUIRE_FALSE(testing::deserialize(system, message, arrived));
  REQUIRE_FALSE(testing::deserialize(system, testing::serialize(system, empty_answer), arrived_empty));
  CHECK(shared_memory_counts().put == before.put);
  CHECK(same_rows(arrived.tables, inline_answer.tables));
  CHECK(arrived_empty.tables.empty());
  CHECK(arrived_empty.refusal.empty());
}

TEST_CASE("rows whose slot was changed after their checksum, or that do not fit their bytes, arrive as none with the reason") {
  const Accepting accepting;
  ActorConfig config{1};
  caf::actor_system system{config};
  SUBCASE("changed after the checksum") {
    const auto where = put_rows_in_shared_memory(awkward_tables());
    REQUIRE(where.has_value());
    auto forged = *where;
    forged.slot.checksum ^= 1;  // as if the slot's bytes had changed since
    PulledRows arrived;
    REQUIRE_FALSE(testing::deserialize(system, answer_message(system, forged), arrived));
    CHECK(arrived.tables.empty());
    CHECK(arrived.refusal == "shared-memory rows failed their checksum (their bytes were changed after their "
                             "sender wrote them)");
  }
  SUBCASE("a layout that runs past its bytes") {
    // A valid slot (checksum and all) whose table header names more keys than follow.
    std::vector<std::uint64_t> words = {0x70735257'6f777331ull, 1, 0, 1000000, 4, 4, 1, 2};
    const auto bytes = words.size() * sizeof(std::uint64_t);
    auto slot = put_in_shared_memory(words.data(), bytes);
    REQUIRE(slot.has_value());
    slot->checksum = payload_checksum(words.data(), bytes);
    PulledRows arrived;
    REQUIRE_FALSE(testing::deserialize(system, answer_message(system, SharedRowsReference{*slot, bytes}), arrived));
    CHECK(arrived.tables.empty());
    CHECK(arrived.refusal == "shared-memory rows were refused: table 0: 1000000 keys lie past their end");
  }
  SUBCASE("more bytes than any list of rows") {
    PulledRows arrived;
    REQUIRE_FALSE(testing::deserialize(
        system, answer_message(system, SharedRowsReference{SharedMemoryReference{}, max_shared_rows_bytes + 1}),
        arrived));
    CHECK(arrived.tables.empty());
    CHECK(arrived.refusal.find("where 16 to 67108864 fit") != std::string::npos);
  }
}

TEST_CASE("a process that does not take shared memory refuses rows sent that way") {
  ActorConfig config{1};
  caf::actor_system system{config};
  PulledRows answer{1, awkward_tables()};
  answer.through_shared_memory = true;
  std::vector<char> message;
  {
    const Accepting accepting;
    message = testing::serialize(system, answer);
  }
  PulledRows arrived;
  REQUIRE_FALSE(testing::deserialize(system, message, arrived));
  CHECK(arrived.tables.empty());
  CHECK(arrived.refusal ==
        "shared-memory rows were refused: this process does not take payloads through shared memory");
}

}  // namespace psgrad
