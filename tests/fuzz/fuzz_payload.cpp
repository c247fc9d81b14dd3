// libFuzzer target: arbitrary bytes decoded as psgrad::Weights, psgrad::Gradients and
// psgrad::ShardSquares, re-encoded exactly.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "payloads/float_buffer.hpp"
#include "payloads/messages.hpp"

namespace {

// Built once and never destroyed: tearing down the scheduler and middleman threads at the fuzzer's
// exit() buys nothing and could hang it.
caf::actor_system& actor_system() {
  static auto* config = new psgrad::ActorConfig(1);
  static auto* system = new caf::actor_system(*config);
  return *system;
}


// A payload whose bytes decode but whose shared-memory slot failed its checksum or could not be taken
// arrives refused, for the receiver to name its sender: that is a refusal too, not a round trip.
bool arrived_refused(const psgrad::Weights& payload) { return payload.values.refused(); }
bool arrived_refused(const psgrad::Gradients& payload) { return payload.values.refused(); }
bool arrived_refused(const psgrad::ShardSquares&) { return false; }

// A payload that decodes must encode back to exactly the bytes it was decoded from; otherwise a
// server and a worker could disagree about a message without either noticing.
template <class Payload>
void round_trip(const std::uint8_t* data, std::size_t size, const char* name) {
  Payload payload;
  caf::binary_deserializer source{actor_system(), reinterpret_cast<const char*>(data), size};
  if (source(payload) || arrived_refused(payload)) return;  // refused, fine as long as nothing crashed
  const std::size_t consumed = size - source.remaining();
  std::vector<char> encoded;
  caf::binary_serializer sink{actor_system(), encoded};
  if (auto err = sink(payload)) {
    std::fprintf(stderr, "%s decoded but does not encode again\n", name);
    std::abort();
  }
  if (encoded.size() != consumed || std::memcmp(encoded.data(), data, consumed) != 0) {
    std::fprintf(stderr, "%s round trip differs: %zu bytes decoded, %zu encoded\n", name, consumed,
                 encoded.size());
    std::abort();
  }
}

}  // namespace

// As a serving or joined process does with its model's size (the seeds' models are far smaller), so
// that a mutated count is held to a run's limit, not the 1 GiB cap of a process that knows no model.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  psgrad::limit_payload_floats(std::uint64_t{1} << 20);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  round_trip<psgrad::Weights>(data, size, "Weights");
  round_trip<psgrad::Gradients>(data, size, "Gradients");
  round_trip<psgrad::ShardSquares>(data, size, "ShardSquares");
  return 0;
}
