// Balanced server shards: cuts inside arrays, Thinc's whole-array clipping kept across the cut, sync
// results bit-identical to one server, and checkpoints that any number of shards resumes from.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "actors/shard_state.hpp"
#include "model/adam.hpp"
#include "model/norm_chunks.hpp"
#include "model/random.hpp"
#include "model/sgd.hpp"
#include "tests/actor_fixtures.hpp"
#include "tests/local_run.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

std::vector<float> random_values(std::size_t size, std::uint64_t seed, double scale) {
  Random rng(seed);
  std::vector<float> values(size);
  for (auto& v : values) v = static_cast<float>((rng.uniform() - 0.5) * scale);
  return values;
}

// Steps one whole optimizer and one per shard (restricted to the cuts) from the same gradients, and
// returns the whole weights and the shards' weights joined.
template <class MakeOptimizer>
std::pair<std::vector<float>, std::vector<float>> step_whole_and_sharded(const ParameterLayout& layout,
                                                                         const std::vector<std::size_t>& cuts,
                                                                         MakeOptimizer make, int steps) {
  auto whole = make();
  std::vector<std::unique_ptr<Optimizer>> shards;
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i) {
    shards.push_back(make());
    REQUIRE(shards.back()->restrict_to(cuts[i], cuts[i + 1]));
  }
  std::vector<float> weights = random_values(layout.total_size(), 1, 0.2);
  std::vector<float> sharded = weights;
  std::vector<float> scratch(norm_chunk_size);
  for (int step = 0; step < steps; ++step) {
    // Two workers' gradients, large enough that relu1.W's whole norm passes the clip of 1.
    const auto g0 = random_values(layout.total_size(), 10 + step, 0.1);
    const auto g1 = random_values(layout.total_size(), 50 + step, 0.1);
    const float* both[] = {g0.data(), g1.data()};
    whole->apply_gradients(weights.data(), weights.data(), both, 2);
    // Each shard gets its part of both gradients and the sums of squares of their sum's chunks held
    // elsewhere, as a pusher computes them.
    for (std::size_t i = 0; i < shards.size(); ++i) {
      const float* parts[] = {g0.data() + cuts[i], g1.data() + cuts[i]};
      std::vector<double> foreign;
      for (const auto& range : shards[i]->foreign_norm_ranges())
        foreign.push_back(range_squares(both, 2, range.begin, range.size, scratch.data()));
      shards[i]->apply_gradients(sharded.data() + cuts[i], sharded.data() + cuts[i], parts, 2, foreign.data());
    }
  }
  return {weights, sharded};
}

}  // namespace

TEST_CASE("shard cuts fall inside arrays so every shard holds about total / K floats") {
  const auto layout = tutorial_layout();
  for (std::size_t count : {2, 3, 4}) {
    CAPTURE(count);
    const auto cuts = shard_cuts(layout, count, Adam::chunk_size);
    REQUIRE(cuts.size() == count + 1);
    CHECK(cuts.front() == 0);
    CHECK(cuts.back() == layout.total_size());
    for (std::size_t i = 0; i < count; ++i) {
      const double share = static_cast<double>(layout.total_size()) / static_cast<double>(count);
      // A cut lands within half a grain of its target, so a shard is at most one grain off its share.
      CHECK(std::fabs(static_cast<double>(cuts[i + 1] - cuts[i]) - share) <= Adam::chunk_size);
    }
  }
  // relu1.W (100,352 floats) is cut in two: neither shard holds 85% any more.
  CHECK(shard_cuts(layout, 2, Adam::chunk_size) == std::vector<std::size_t>{0, 57344, layout.total_size()});
}

TEST_CASE("shard cuts on array boundaries only when the grain exceeds every array") {
  ParameterLayout layout;
  for (int i = 0; i < 6; ++i) layout.add("layer", "W", 10, 10);
  const auto whole_arrays = std::numeric_limits<std::size_t>::max();
  CHECK(shard_cuts(layout, 1, whole_arrays) == std::vector<std::size_t>{0, 600});
  CHECK(shard_cuts(layout, 2, whole_arrays) == std::vector<std::size_t>{0, 300, 600});
  CHECK(shard_cuts(layout, 3, whole_arrays) == std::vector<std::size_t>{0, 200, 400, 600});
  CHECK(shard_cuts(layout, 7, whole_arrays).empty());  // more shards than arrays
}

TEST_CASE("Adam restricted to shards cut inside an array steps bit for bit like one Adam") {
  const auto layout = tutorial_layout();
  AdamSettings settings;
  settings.use_averages = true;
  for (std::size_t count : {2, 3, 4}) {
    CAPTURE(count);
    const auto cuts = shard_cuts(layout, count, Adam::chunk_size);
    const auto [whole, sharded] =
        step_whole_and_sharded(layout, cuts, [&] { return std::make_unique<Adam>(settings, layout); }, 3);
    CHECK(std::memcmp(whole.data(), sharded.data(), whole.size() * sizeof(float)) == 0);
  }
}

TEST_CASE("a shard clips by the whole array's norm, not by its own part's") {
  const auto layout = tutorial_layout();
  const auto cuts = shard_cuts(layout, 2, Adam::chunk_size);
  // Each half of relu1.W alone would have a norm under the clip, the whole array's is over it:
  // a shard clipping by its own part would step differently.
  // Summed gradients have a variance of 2 x 0.1^2 / 12 per float: relu1.W's norm is about 12.9, its
  // parts' about 9.8 and 8.5.
  AdamSettings settings;
  settings.grad_clip = 11.0;
  const auto [whole, sharded] =
      step_whole_and_sharded(layout, cuts, [&] { return std::make_unique<Adam>(settings, layout); }, 1);
  CHECK(std::memcmp(whole.data(), sharded.data(), whole.size() * sizeof(float)) == 0);
  // The same split clipped per part does differ, so the check above can fail.
  ParameterLayout halves;
  halves.add("relu1", "W0", 1, cuts[1]);
  halves.add("relu1", "W1", 1, layout[0].size() - cuts[1]);
  for (std::size_t a = 1; a < layout.array_count(); ++a) halves.add(layout[a].layer, layout[a].name, layout[a].rows, layout[a].cols);
  Adam per_part(settings, halves);
  auto weights = random_values(layout.total_size(), 1, 0.2);
  const auto g0 = random_values(layout.total_size(), 10, 0.1);
  const auto g1 = random_values(layout.total_size(), 50, 0.1);
  const float* both[] = {g0.data(), g1.data()};
  per_part.apply_gradients(weights.data(), weights.data(), both, 2);
  CHECK(std::memcmp(whole.data(), weights.data(), whole.size() * sizeof(float)) != 0);
}

TEST_CASE("SGD restricted to shards cut inside an array steps bit for bit like one SGD") {
  const auto layout = tutorial_layout();
  // relu1.W cut twice, so the middle shard's clip norm needs chunks from both sides.
  const auto cuts = std::vector<std::size_t>{0, 2 * norm_chunk_size, 10 * norm_chunk_size, layout.total_size()};
  const auto [whole, sharded] =
      step_whole_and_sharded(layout, cuts, [&] { return std::make_unique<Sgd>(SgdSettings{}, layout); }, 3);
  CHECK(std::memcmp(whole.data(), sharded.data(), whole.size() * sizeof(float)) == 0);
  // Off the norm grid, a shard could not add up the chunks held elsewhere.
  Sgd sgd(SgdSettings{}, layout);
  CHECK_FALSE(sgd.restrict_to(0, 12345));
}

TEST_CASE("an optimizer with coupled L2 refuses to own part of an array, and takes whole arrays") {
  const auto layout = tutorial_layout();
  AdamSettings settings;
  settings.L2 = 1e-4;
  settings.L2_is_weight_decay = false;
  Adam adam(settings, layout);
  CHECK_FALSE(adam.restrict_to(0, 57344));
  CHECK(adam.restrict_to(0, layout[1].offset));
}

TEST_CASE("sharded sync training cut inside arrays gives the weights of one server, bit for bit") {
  // 784 inputs and 128 hidden units: the first array (100,352 floats) is cut for every K > 1.
  const auto data = synthetic_data(256, 784, 10, 11);
  auto job = small_job(TrainingMode::sync, 2, 4);
  job.model.settings = {{"hidden_width", std::int64_t{128}}, {"dropout", 0.2}};
  auto run = [&](std::size_t servers) {
    job.cluster.servers = servers;
    ActorConfig config(2);
    caf::actor_system system{config};
    auto summary = train_in_process(system, job, data, data, nullptr);
    REQUIRE_MESSAGE(summary.ok(), (summary.ok() ? "" : summary.error()));
    return std::move(summary).value();
  };
  const auto reference = run(1);
  for (std::size_t servers : {2, 3, 4}) {
    CAPTURE(servers);
    const auto summary = run(servers);
    CHECK(summary.final_weights.version == 4);
    CHECK(summary.final_weights.values == reference.final_weights.values);
  }
}

TEST_CASE("shard states join into one server's state and split back") {
  OptimizerState whole;
  whole.buffers = {1, 2, 3, 4, 5, 10, 20, 30, 40, 50};  // two buffers of five floats
  whole.counts = {7, 7};
  const auto left = slice_optimizer_state(whole, 5, 0, 2);
  const auto right = slice_optimizer_state(whole, 5, 2, 5);
  CHECK(left.buffers == std::vector<float>{1, 2, 10, 20});
  CHECK(right.buffers == std::vector<float>{3, 4, 5, 30, 40, 50});
  std::vector<float> weights = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f};
  std::vector<ServerState> parts(2);
  parts[0].weights = Weights{9, 3, FloatBuffer::copy_of(weights.data(), 2)};
  parts[0].optimizer = left;
  parts[1].weights = Weights{9, 3, FloatBuffer::copy_of(weights.data() + 2, 3)};
  parts[1].optimizer = right;
  const auto joined = join_server_states(parts);
  REQUIRE(joined.ok());
  CHECK(joined->weights.version == 9);
  CHECK(joined->weights.values == FloatBuffer::copy_of(weights.data(), weights.size()));
  CHECK(joined->optimizer.buffers == whole.buffers);
  CHECK(joined->optimizer.counts == whole.counts);
  parts[1].weights.version = 8;
  CHECK_FALSE(join_server_states(parts).ok());
}

TEST_CASE("a sharded sync run resumed from its checkpoint ends with the uninterrupted weights") {
  const auto data = synthetic_data(256, 784, 10, 12);
  auto job = small_job(TrainingMode::sync, 2, 6);
  job.model.settings = {{"hidden_width", std::int64_t{128}}, {"dropout", 0.2}};
  job.training.checkpoint_every = 3;
  job.cluster.servers = 2;
  auto run = [&](const TrainingJob& j, const std::optional<TrainingCheckpoint>& resume,
                 std::vector<TrainingCheckpoint>* checkpoints) { return train_locally(j, data, 2, resume, checkpoints); };
  std::vector<TrainingCheckpoint> checkpoints;
  const auto uninterrupted = run(job, std::nullopt, &checkpoints);
  REQUIRE(checkpoints.size() >= 2);
  REQUIRE(checkpoints[0].iteration == 3);
  // The same checkpoint resumes with two shards, with three, and with one server.
  for (std::size_t servers : {2, 3, 1}) {
    CAPTURE(servers);
    auto resumed_job = job;
    resumed_job.cluster.servers = servers;
    const auto resumed = run(resumed_job, checkpoints[0], nullptr);
    CHECK(resumed.final_weights.version == 6);
    CHECK(resumed.final_weights.values == uninterrupted.final_weights.values);
  }
  // And a sharded checkpoint is the one a single server writes.
  auto single = job;
  single.cluster.servers = 1;
  std::vector<TrainingCheckpoint> single_checkpoints;
  run(single, std::nullopt, &single_checkpoints);
  REQUIRE(single_checkpoints.size() == checkpoints.size());
  CHECK(single_checkpoints[0].weights == checkpoints[0].weights);
  CHECK(single_checkpoints[0].optimizer.buffers == checkpoints[0].optimizer.buffers);
  CHECK(single_checkpoints[0].optimizer.counts == checkpoints[0].optimizer.counts);
}

TEST_CASE("an async run on server shards takes each checkpoint once every shard has applied the same gradients") {
  // Each shard applies its part of a push on its own: a checkpoint taken while one has applied a gradient
  // another has not would not join (the run failed with "shard 1 is at step 4 and shard 0 at step 3").
  const auto data = synthetic_data(256, 784, 10, 13);
  for (const auto mode : {TrainingMode::async, TrainingMode::ssp}) {
    CAPTURE(mode_name(mode));
    auto job = small_job(mode, 2, 30);
    job.model.settings = {{"hidden_width", std::int64_t{128}}, {"dropout", 0.2}};
    job.training.checkpoint_every = 2;
    job.cluster.servers = 2;
    std::vector<TrainingCheckpoint> checkpoints;
    const auto summary = train_locally(job, data, 2, std::nullopt, &checkpoints);
    CHECK(summary.steps == 60);
    // One at each multiple of checkpoint_every up to the end, each on its step: the shards' credits stop there.
    REQUIRE(checkpoints.size() >= 29);
    for (const auto& checkpoint : checkpoints) {
      CHECK(checkpoint.iteration % 2 == 0);
      CHECK(checkpoint.version == checkpoint.iteration);
    }
  }
}

TEST_CASE("server shard cuts refuse more shards than the model can be cut into, saying how many it can") {
  ParameterLayout layout;
  for (int layer = 0; layer < 3; ++layer) {
    layout.add("l" + std::to_string(layer), "W", 10, 10);
    layout.add("l" + std::to_string(layer), "b", 1, 10);
  }
  auto job = small_job(TrainingMode::sync, 2, 10);
  CHECK(server_shard_cuts(job, layout, 6).ok());
  const auto refused = server_shard_cuts(job, layout, 8);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error() == "cannot split the model's 6 parameter arrays (330 floats) into 8 server shards for "
                           "Adam.v1: at most 6");
}
