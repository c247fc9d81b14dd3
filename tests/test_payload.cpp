// Payloads cross the network as raw bytes: exact round trips (NaN, Inf, denormals) and header checks.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "payloads/messages.hpp"
#include "tests/message_bytes.hpp"

using namespace psgrad;
using namespace psgrad::testing;

TEST_CASE("weights round-trip as raw bytes bit for bit, NaN, Inf and denormals included") {
  ActorConfig config(1);
  caf::actor_system system{config};
  std::vector<float> values = {0.0f, -0.0f, 1.5f, std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::denorm_min(), -1e-40f, 3.4e38f};
  std::uint32_t payload_nan = 0x7fc12345;
  float odd_nan;
  std::memcpy(&odd_nan, &payload_nan, 4);
  values.push_back(odd_nan);
  Weights original{42, 0x1234abcd, FloatBuffer::copy_of(values.data(), values.size())};
  const auto bytes = serialize(system, original);
  // One block of floats plus a small header, not a float-by-float encoding.
  CHECK(bytes.size() < values.size() * sizeof(float) + 40);
  Weights copy;
  REQUIRE_FALSE(deserialize(system, bytes, copy));
  CHECK(copy.version == 42);
  CHECK(copy.layout_hash == 0x1234abcd);
  CHECK(copy.values == original.values);
  CHECK(std::memcmp(copy.values.data(), values.data(), values.size() * 4) == 0);
}

TEST_CASE("a payload whose header has the wrong magic is rejected") {
  ActorConfig config(1);
  caf::actor_system system{config};
  std::vector<float> values(16, 1.0f);
  auto bytes = serialize(system, Weights{1, 2, FloatBuffer::copy_of(values.data(), values.size())});
  bytes[16] ^= 0x5a;  // first byte of the buffer's magic, after version and layout hash
  Weights copy;
  CHECK(deserialize(system, bytes, copy));
}

TEST_CASE("a payload declaring more floats than allowed is refused before allocating") {
  ActorConfig config(1);
  caf::actor_system system{config};
  std::vector<float> values(4, 1.0f);
  auto bytes = serialize(system, Weights{1, 2, FloatBuffer::copy_of(values.data(), values.size())});
  const std::uint64_t huge = max_float_buffer_size + 1;
  std::memcpy(bytes.data() + 20, &huge, sizeof huge);  // the count follows the 4-byte magic
  Weights copy;
  CHECK(deserialize(system, bytes, copy));
}

TEST_CASE("a truncated payload is rejected") {
  ActorConfig config(1);
  caf::actor_system system{config};
  std::vector<float> values(64, 2.0f);
  auto bytes = serialize(system, Weights{1, 2, FloatBuffer::copy_of(values.data(), values.size())});
  bytes.resize(bytes.size() - 10);
  Weights copy;
  CHECK(deserialize(system, bytes, copy));
}
