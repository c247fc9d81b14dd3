// As tests/test_payload.cpp does it: caf::binary_serializer into a byte vector, binary_deserializer
// back into a fresh Weights (which allocates its buffer, as a receiving process does).
#include "bench/payload_cost.hpp"

#include <stdexcept>
#include <vector>

#include "actors/actor_config.hpp"
#include "payloads/messages.hpp"
#include "caf/actor_system.hpp"
#include "caf/binary_deserializer.hpp"
#include "caf/binary_serializer.hpp"

namespace psgrad::bench {

void measure_payload_cost(BenchContext& context, Report& report) {
  ActorConfig config(1);
  caf::actor_system system{config};
  std::vector<float> values(context.parameter_count);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i % 251) * 1e-3f;
  const Weights weights{7, 0x1234, FloatBuffer::copy_of(values.data(), values.size())};

  std::vector<char> bytes;
  auto serialize = [&] {
    bytes.clear();  // capacity stays: the middleman reuses its buffers too
    caf::binary_serializer sink{system, bytes};
    if (sink(const_cast<Weights&>(weights))) throw std::runtime_error("serializing Weights failed");
  };
  serialize();
  const std::size_t payload_bytes = bytes.size();
  Weights copy;
  auto deserialize = [&] {
    caf::binary_deserializer source{system, bytes};
    if (source(copy)) throw std::runtime_error("deserializing Weights failed");
  };
  const std::size_t repeats = std::max<std::size_t>(context.effort.repeats, context.options.quick ? 1 : 5);
  const double seconds = context.effort.seconds_per_sample / 5.0;
  const auto serialize_seconds = time_per_call(repeats, calls_for(seconds, serialize, 3), serialize);
  const auto deserialize_seconds = time_per_call(repeats, calls_for(seconds, deserialize, 3), deserialize);
  if (!(copy.values == weights.values)) throw std::runtime_error("Weights did not round-trip");

  const char* section = "4 processes";
  report.add({"payload.bytes", section, "serialized Weights payload", exact(static_cast<double>(payload_bytes) * 1e-6),
              "MB", ""});
  report.add({"payload.serialize_us", section, "  binary_serializer, one payload", scaled(serialize_seconds, 1e6),
              "µs", ""});
  report.add({"payload.deserialize_us", section, "  binary_deserializer, one payload",
              scaled(deserialize_seconds, 1e6), "µs", "allocates the buffer"});
  report.add({"payload.serialize_gb_per_second", section, "  serializer throughput",
              scaled(reciprocal(serialize_seconds), static_cast<double>(payload_bytes) * 1e-9), "GB/s", ""});
}

}  // namespace psgrad::bench
