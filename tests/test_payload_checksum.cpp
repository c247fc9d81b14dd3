// The checksum a shared-memory payload travels with: the same bytes give the same sum, and any change
// to one word, or words swapped, gives another.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "payloads/payload_checksum.hpp"

namespace psgrad {
namespace {

// The tutorial model's gradient size: 118,282 floats, 473,128 bytes (40 past the last 64-byte block).
std::vector<float> gradient_like() {
  std::vector<float> values(118282);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<float>(i) + 0.5f) * 1e-3f;
  return values;
}

std::uint64_t checksum_of(const std::vector<float>& values) {
  return payload_checksum(values.data(), values.size() * sizeof(float));
}

}  // namespace

TEST_CASE("a payload's checksum is the same for the same bytes and changes with any one word, its size or its order") {
  const auto values = gradient_like();
  const auto original = checksum_of(values);
  CHECK(checksum_of(gradient_like()) == original);
  // One value at the start, in the middle, in the last whole block and in the tail; NaN, zero and
  // one bit flipped.
  for (const std::size_t at : {std::size_t{0}, std::size_t{1}, values.size() / 2, values.size() - 11, values.size() - 1}) {
    CAPTURE(at);
    auto changed = values;
    changed[at] = std::numeric_limits<float>::quiet_NaN();
    CHECK(checksum_of(changed) != original);
    changed[at] = 0.0f;
    CHECK(checksum_of(changed) != original);
    changed = values;
    std::uint32_t bits;
    std::memcpy(&bits, &changed[at], sizeof bits);
    bits ^= 1;
    std::memcpy(&changed[at], &bits, sizeof bits);
    CHECK(checksum_of(changed) != original);
  }
  // Two values swapped: within a 64-bit word, across lanes, and between blocks of one lane.
  for (const auto& [a, b] : {std::pair<std::size_t, std::size_t>{4, 5}, {4, 6}, {4, 20}, {100, 100 + 16 * 40}}) {
    CAPTURE(a);
    CAPTURE(b);
    auto swapped = values;
    std::swap(swapped[a], swapped[b]);
    CHECK(checksum_of(swapped) != original);
  }
  // The same bytes one float shorter; all zeros of two sizes.
  CHECK(payload_checksum(values.data(), (values.size() - 1) * sizeof(float)) != original);
  const std::vector<float> zeros(values.size(), 0.0f);
  CHECK(payload_checksum(zeros.data(), 64) != payload_checksum(zeros.data(), 128));
}

}  // namespace psgrad
