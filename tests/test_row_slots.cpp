// A table's key-to-slot map: slots in first-insertion order, every key (0 and the largest too) found
// again after the map has grown many times, absent keys not found.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "model/random.hpp"
#include "model/row_slots.hpp"

using namespace psgrad;

TEST_CASE("row slots number keys in first-insertion order and find each again after growing") {
  RowSlots slots;
  std::unordered_map<std::uint64_t, std::size_t> expected;
  // Keys of one shard of four share their low bits; random ones spread; 0 and the largest are keys too.
  std::vector<std::uint64_t> keys = {0, std::numeric_limits<std::uint64_t>::max()};
  for (std::uint64_t k = 0; k < 20000; ++k) keys.push_back(4 * k + 3);
  Random rng(5);
  for (int i = 0; i < 20000; ++i) keys.push_back(rng.next());
  for (const auto key : keys) {
    bool added = false;
    const auto slot = slots.insert(key, added);
    const auto [it, fresh] = expected.try_emplace(key, expected.size());
    CHECK(added == fresh);
    CHECK(slot == it->second);
  }
  CHECK(slots.size() == expected.size());
  for (const auto& [key, slot] : expected) CHECK(slots.find(key) == slot);
  for (std::uint64_t k = 0; k < 1000; ++k) CHECK(slots.find(4 * k + 1) == RowSlots::kNone);
  auto listed = slots.keys();
  std::sort(listed.begin(), listed.end());
  std::vector<std::uint64_t> all;
  for (const auto& entry : expected) all.push_back(entry.first);
  std::sort(all.begin(), all.end());
  CHECK(listed == all);
}

TEST_CASE("row slots: inserting a key again returns its slot and adds nothing") {
  RowSlots slots;
  bool added = false;
  CHECK(slots.find(7) == RowSlots::kNone);
  CHECK(slots.insert(7, added) == 0);
  CHECK(added);
  CHECK(slots.insert(9, added) == 1);
  CHECK(slots.insert(7, added) == 0);
  CHECK_FALSE(added);
  CHECK(slots.size() == 2);
}
