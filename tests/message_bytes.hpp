// A message payload to the bytes CAF's binary serializer makes of it (as it crosses the network), and back.
#pragma once

#include <vector>

#include <doctest/doctest.h>

#include "caf/actor_system.hpp"
#include "caf/binary_deserializer.hpp"
#include "caf/binary_serializer.hpp"
#include "caf/error.hpp"

namespace psgrad::testing {

template <class Payload>
std::vector<char> serialize(caf::actor_system& system, Payload payload) {
  std::vector<char> bytes;
  caf::binary_serializer sink{system, bytes};
  REQUIRE_FALSE(sink(payload));
  return bytes;
}

template <class Payload>
caf::error deserialize(caf::actor_system& system, const std::vector<char>& bytes, Payload& payload) {
  caf::binary_deserializer source{system, bytes};
  return source(payload);
}

}  // namespace psgrad::testing
