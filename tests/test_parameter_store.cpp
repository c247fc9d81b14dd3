// The parameter store and the shards' agreement, driven directly: no actor system anywhere here.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "actors/shard_agreement.hpp"
#include "model/adam.hpp"
#include "model/norm_chunks.hpp"
#include "model/random.hpp"
#include "store/parameter_store.hpp"

using namespace psgrad;

namespace {

ParameterLayout two_arrays() {
  ParameterLayout layout;
  layout.add("dense", "W", 64, 300);  // 19,200 floats: cut on the 8,192-float norm grid
  layout.add("dense", "b", 1, 64);
  return layout;
}

std::vector<float> values(std::size_t size, float scale, std::uint64_t seed) {
  Random random(seed);
  std::vector<float> out(size);
  for (auto& x : out) x = scale * (static_cast<float>(random.uniform()) - 0.5f);
  return out;
}

std::unique_ptr<Optimizer> adam(const ParameterLayout& layout) {
  AdamSettings settings;
  settings.grad_clip = 0.01;  // small, so the clip norm matters in every step
  return std::make_unique<Adam>(settings, layout);
}

bool same_bits(const float* a, const float* b, std::size_t size) { return std::memcmp(a, b, size * sizeof(float)) == 0; }

}  // namespace

TEST_CASE("the parameter store sums gradients in the given order and steps as its optimizer does") {
  const auto layout = two_arrays();
  const auto start = values(layout.total_size(), 0.2f, 1);
  const auto first = values(layout.total_size(), 1.0f, 2), second = values(layout.total_size(), 1.0f, 3);
  ParameterStore store(layout, start, adam(layout));
  const float* both[] = {first.data(), second.data()};
  REQUIRE_FALSE(store.apply_gradients(both, 2, nullptr, 0.5f).has_value());
  CHECK(store.version() == 1);
  auto reference = start;
  adam(layout)->apply_gradients(reference.data(), reference.data(), both, 2);
  CHECK(same_bits(store.weights().get(), reference.data(), reference.size()));
  CHECK_FALSE(same_bits(store.weights().get(), start.data(), start.size()));
}

TEST_CASE("the parameter store steps in place only while nobody else holds its weights") {
  const auto layout = two_arrays();
  const auto gradient = values(layout.total_size(), 1.0f, 2);
  const float* one[] = {gradient.data()};
  ParameterStore store(layout, values(layout.total_size(), 0.2f, 1), adam(layout));
  const float* before = store.weights().get();
  REQUIRE_FALSE(store.apply_gradients(one, 1, nullptr, 0.0f).has_value());
  CHECK(store.weights().get() == before);  // nobody held them: in place
  const std::shared_ptr<const float> held = store.weights();
  const std::vector<float> held_copy(held.get(), held.get() + store.size());
  REQUIRE_FALSE(store.apply_gradients(one, 1, nullptr, 0.0f).has_value());
  CHECK(store.weights().get() != held.get());  // a worker reads them: a free buffer
  CHECK(same_bits(held.get(), held_copy.data(), held_copy.size()));
  // A buffer a step was told to write (shared memory a reader maps without holding it) is never
  // written in place by the next step, even when nobody holds it any more.
  auto slot = std::shared_ptr<float>(new float[store.size()], std::default_delete<float[]>());
  const float* slot_floats = slot.get();
  REQUIRE_FALSE(store.apply_gradients(one, 1, nullptr, 0.0f, std::move(slot)).has_value());
  CHECK(store.weights().get() == slot_floats);
  REQUIRE_FALSE(store.apply_gradients(one, 1, nullptr, 0.0f).has_value());
  CHECK(store.weights().get() != slot_floats);
  CHECK(store.version() == 4);
}

TEST_CASE("the parameter store refuses a non-finite loss without a step and names the step that diverged") {
  const auto layout = two_arrays();
  const auto start = values(layout.total_size(), 0.2f, 1);
  ParameterStore store(layout, start, adam(layout));
  const auto gradient = values(layout.total_size(), 1.0f, 2);
  const float* one[] = {gradient.data()};
  const auto refused = store.apply_gradients(one, 1, nullptr, std::numeric_limits<float>::quiet_NaN());
  REQUIRE(refused.has_value());
  CHECK(refused->rfind("training diverged at step 1: the loss is nan", 0) == 0);
  CHECK(store.version() == 0);
  CHECK(same_bits(store.weights().get(), start.data(), start.size()));
  auto poisoned = gradient;
  poisoned[7] = std::numeric_limits<float>::infinity();
  const float* bad[] = {poisoned.data()};
  const auto diverged = store.apply_gradients(bad, 1, nullptr, 0.25f);
  REQUIRE(diverged.has_value());
  CHECK(diverged->find("not finite") != std::string::npos);
  CHECK(store.version() == 0);
}

TEST_CASE("two shard stores with each other's sums of squares step bit for bit as one store") {
  const auto layout = two_arrays();
  const auto cuts = shard_cuts(layout, 2, norm_chunk_size);
  REQUIRE(cuts.size() == 3);
  REQUIRE(cuts[1] % norm_chunk_size == 0);  // inside the first array: its clip norm spans both shards
  const auto start = values(layout.total_size(), 0.2f, 1);
  const auto first = values(layout.total_size(), 1.0f, 2), second = values(layout.total_size(), 1.0f, 3);
  ParameterStore whole(layout, start, adam(layout));
  const float* both[] = {first.data(), second.data()};
  REQUIRE_FALSE(whole.apply_gradients(both, 2, nullptr, 0.0f).has_value());

  std::vector<ParameterStore> shards;
  std::vector<ShardPlan> plans;
  for (std::size_t i = 0; i < 2; ++i) {
    auto optimizer = adam(layout);
    REQUIRE(optimizer->restrict_to(cuts[i], cuts[i + 1]));
    shards.emplace_back(layout, std::vector<float>(start.begin() + cuts[i], start.begin() + cuts[i + 1]),
                        std::move(optimizer), cuts[i], cuts[i + 1]);
    plans.push_back(ShardPlan{cuts[i], cuts[i + 1], shards.back().foreign_norm_ranges()});
  }
  // Each shard's agreement computes the squares its peer needs; the peer steps with them.
  ShardAgreement agreements[2];
  for (std::uint32_t i = 0; i < 2; ++i) REQUIRE_FALSE(agreements[i].meet(i, plans, plans[i]).has_value());
  for (std::uint32_t i = 0; i < 2; ++i) {
    const float* mine[] = {first.data() + cuts[i], second.data() + cuts[i]};
    for (auto& [peer, told] : agreements[i].open(0, {0, 1}, mine, 2, cuts[i]))
      REQUIRE_FALSE(agreements[peer].receive(std::move(told), 0, false).has_value());
  }
  for (std::uint32_t i = 0; i < 2; ++i) {
    REQUIRE_FALSE(agreements[i].narrow());
    REQUIRE(agreements[i].agreed());
    const float* mine[] = {first.data() + cuts[i], second.data() + cuts[i]};
    REQUIRE_FALSE(shards[i].apply_gradients(mine, 2, agreements[i].foreign_squares().data(), 0.0f).has_value());
    CHECK(same_bits(shards[i].weights().get(), whole.weights().get() + cuts[i], cuts[i + 1] - cuts[i]));
  }
}

TEST_CASE("shard agreement drops to the workers every shard holds, and refuses squares of another step") {
  const auto layout = two_arrays();
  const auto cuts = shard_cuts(layout, 2, norm_chunk_size);
  std::vector<ShardPlan> plans;
  for (std::size_t i = 0; i < 2; ++i) {
    auto optimizer = adam(layout);
    REQUIRE(optimizer->restrict_to(cuts[i], cuts[i + 1]));
    plans.push_back(ShardPlan{cuts[i], cuts[i + 1], optimizer->foreign_norm_ranges()});
  }
  ShardAgreement agreements[2];
  for (std::uint32_t i = 0; i < 2; ++i) REQUIRE_FALSE(agreements[i].meet(i, plans, plans[i]).has_value());
  CHECK(agreements[0].meet(0, plans, plans[1]).has_value());  // told it holds what it does not
  const auto gradient = values(layout.total_size(), 1.0f, 2);
  const float* at_0[] = {gradient.data(), gradient.data()};
  const float* at_1[] = {gradient.data() + cuts[1]};
  agreements[0].open(3, {0, 1}, at_0, 2, 0);
  REQUIRE(agreements[0].open_step());
  // Worker 0's gradient never reached shard 1 (its worker was lost): shard 0 narrows to worker 1.
  auto told = agreements[1].open(3, {1}, at_1, 1, cuts[1]);
  REQUIRE(told.size() == 1);
  REQUIRE_FALSE(agreements[0].receive(told[0].second, 3, false).has_value());
  CHECK(agreements[0].narrow());
  CHECK_FALSE(agreements[0].narrow());
  CHECK(agreements[0].workers() == std::vector<std::uint32_t>{1});
  CHECK(agreements[0].agreed());  // what shard 1 told is of exactly these workers
  // The same word again is refused, as are squares of another step and from no such peer.
  CHECK(agreements[0].receive(told[0].second, 3, false).value_or("") == "it already told them for this step");
  auto stale = told[0].second;
  stale.version = 2;
  CHECK(agreements[0].receive(stale, 3, false).value_or("").find("out of step") != std::string::npos);
  auto self_told = told[0].second;
  self_told.shard = 0;
  CHECK(agreements[0].receive(self_told, 3, false).value_or("") == "no such peer");
}

TEST_CASE("shard cuts refuse more shards than there are points to cut at, instead of reading past them") {
  const auto layout = two_arrays();  // 3 points on the norm grid in W, one at b, and the end
  CHECK(shard_cuts(layout, 4, norm_chunk_size).size() == 5);
  CHECK(shard_cuts(layout, 5, norm_chunk_size).empty());
  CHECK(shard_cuts(layout, 24, norm_chunk_size).empty());
  CHECK(shard_cuts(layout, 3, std::numeric_limits<std::size_t>::max()).empty());  // array boundaries: 2 points
  CHECK(shard_cuts(layout, 0, norm_chunk_size).empty());
}
