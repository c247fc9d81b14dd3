// What a server shard receives of each gradient: only the floats of its range, and the few sums of
// squares its clip norms need of the arrays it shares with other shards, in sync and async and with
// every wire encoding; a gradient that is not its part is refused.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/data_worker.hpp"
#include "runtime/error_text.hpp"
#include "actors/evaluator.hpp"
#include "actors/gradient_slicer.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "store/parameter_store.hpp"
#include "actors/training_driver.hpp"
#include "model/gradient_clip.hpp"
#include "model/random.hpp"
#include "tests/actor_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

// The gradients one shard was handed, as they arrived.
struct Received {
  struct Push {
    std::size_t floats = 0;
    std::size_t squares = 0;  // sums of squares of foreign chunks carried
    std::uint64_t wire_bytes = 0;     // of its values
    std::uint64_t message_bytes = 0;  // of the whole Gradients, as it crosses the network
  };
  std::mutex mutex;
  std::condition_variable squares_came;
  std::vector<Push> pushes;
  std::vector<ShardSquares> squares;  // told by other shards (sync)

  void note_squares(const ShardSquares& told) {
    const std::lock_guard<std::mutex> lock(mutex);
    squares.push_back(told);
    squares_came.notify_all();
  }
  // The peer notes squares on its own thread, which may run after the answers reached the test: waits
  // until `count` have come (a minute at most, so that a lost one fails instead of hanging).
  bool wait_for_squares(std::size_t count) {
    std::unique_lock<std::mutex> lock(mutex);
    return squares_came.wait_for(lock, std::chrono::minutes(1), [&] { return squares.size() >= count; });
  }

  void note(caf::actor_system& system, const Gradients& gradients) {
    std::vector<char> bytes;
    caf::binary_serializer sink{system, bytes};
    if (sink(const_cast<Gradients&>(gradients))) bytes.clear();  // not serializable: noted as 0 bytes
    const std::lock_guard<std::mutex> lock(mutex);
    pushes.push_back(
        Push{gradients.values.size(), gradients.foreign_squares.size(), wire_bytes(gradients.values), bytes.size()});
  }
};

// Stands between the pushers (driver and workers) and a real shard, noting every gradient it passes on.
ParameterServerActor::behavior_type relay(ParameterServerActor::pointer self, ParameterServerActor shard,
                                          std::shared_ptr<Received> received,
                                          std::chrono::milliseconds squares_delay = std::chrono::milliseconds{0}) {
  return {
      [=](apply_atom, const Gradients& gradients) -> caf::result<Weights> {
        received->note(self->system(), gradients);
        return self->delegate(shard, apply_atom::value, gradients);
      },
      [=](listen_atom, const StepListener& listener, std::uint32_t index) {
        self->send(shard, listen_atom::value, listener, index);
      },
      [=](barrier_atom, const std::vector<std::uint32_t>& members,
          std::uint32_t needed) -> caf::result<std::vector<std::uint32_t>> {
        return self->delegate(shard, barrier_atom::value, members, needed);
      },
      [=](weights_atom) -> caf::result<Weights> { return self->delegate(shard, weights_atom::value); },
      [=](master_atom) -> caf::result<Weights> { return self->delegate(shard, master_atom::value); },
      [=](averages_atom) -> caf::result<Weights> { return self->delegate(shard, averages_atom::value); },
      [=](state_atom) -> caf::result<ServerState> { return self->delegate(shard, state_atom::value); },
      [=](plan_atom) -> caf::result<ShardPlan> { return self->delegate(shard, plan_atom::value); },
      [=](peers_atom, std::uint32_t index, const std::vector<ShardPeer>& peers,
          const std::vector<ShardPlan>& plans) -> caf::result<bool> {
        return self->delegate(shard, peers_atom::value, index, peers, plans);
      },
      [=](squares_atom, const ShardSquares& told) {
        received->note_squares(told);
        if (squares_delay.count() > 0) return self->delayed_send(shard, squares_delay, squares_atom::value, told);
        self->send(shard, squares_atom::value, told);
      },
      [=](received_atom, std::uint32_t worker, std::uint64_t version) {
        self->send(shard, received_atom::value, worker, version);
      },
      [=](stop_atom) -> caf::result<bool> { return self->delegate(shard, stop_atom::value); },
  };
}

struct Shard {
  std::size_t floats = 0;         // it holds
  std::size_t foreign_chunks = 0;  // whose sums of squares it needs
  std::shared_ptr<Received> received = std::make_shared<Received>();
};

struct RelayedRun {
  TrainingSummary summary;
  std::vector<Shard> shards;
};

// What a relayed run may also have: hooks for the driver, and one shard told its peers' squares late.
struct RelayOptions {
  DriverHooks hooks;
  std::size_t late_shard = 0;
  std::chrono::milliseconds squares_delay{0};
};

// A whole training run in this process, with a relay in front of every server.
RelayedRun run_through_relays(const TrainingJob& job, const std::shared_ptr<const Dataset>& data,
                              const RelayOptions& options = {}) {
  ActorConfig config(2);
  caf::actor_system system{config};
  auto whole = initial_server_state(job, data->width, data->num_classes);
  REQUIRE(whole.ok());
  std::vector<std::shared_ptr<ParameterServerState>> states = {*whole};
  if (job.cluster.servers > 1) {
    auto shards = shard_server_state(job, **whole, job.cluster.servers);
    REQUIRE_MESSAGE(shards.ok(), (shards.ok() ? "" : shards.error()));
    states = std::move(shards).value();
  }
  RelayedRun run;
  std::vector<ParameterServerActor> servers, relays;
  for (const auto& state : states) {
    Shard shard;
    shard.floats = state->end == 0 ? state->layout.total_size() : state->end - state->begin;
    shard.foreign_chunks = state->optimizer->foreign_norm_ranges().size();
    servers.push_back(spawn_parameter_server(system, state));
    const auto delay = servers.size() - 1 == options.late_shard ? options.squares_delay : std::chrono::milliseconds{0};
    relays.push_back(system.spawn(relay, servers.back(), shard.received, delay));
    run.shards.push_back(std::move(shard));
  }
  std::vector<DataWorkerActor> workers;
  for (std::size_t k = 0; k < job.cluster.num_workers; ++k) {
    auto worker = spawn_data_worker(system, DataWorkerSetup{job, k, data});
    REQUIRE(worker.ok());
    workers.push_back(worker->actor);
  }
  auto evaluator = spawn_evaluator(system, job, EvaluatorSetup{data});
  REQUIRE(evaluator.ok());
  auto summary = run_driver(system, spawn_training_driver(system, job, relays, workers, *evaluator, options.hooks));
  REQUIRE_MESSAGE(summary.ok(), (summary.ok() ? "" : summary.error()));
  run.summary = std::move(summary).value();
  for (const auto& server : servers) caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  for (const auto& server : relays) caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  for (const auto& worker : workers) caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(*evaluator, caf::exit_reason::user_shutdown);
  return run;
}

// Per step (the version it starts from): how many shards told this one their squares, and how many
// sums of squares they told in all.
std::map<std::uint64_t, std::pair<std::size_t, std::size_t>> squares_per_step(const Shard& shard) {
  std::map<std::uint64_t, std::pair<std::size_t, std::size_t>> steps;
  for (const auto& told : shard.received->squares) {
    ++steps[told.version].first;
    steps[told.version].second += told.squares.size();
  }
  return steps;
}

// 784 inputs and 128 hidden units: the first array (100,352 floats) is cut for every K > 1.
TrainingJob cut_job(TrainingMode mode, std::uint64_t iterations) {
  auto job = small_job(mode, 2, iterations);
  job.model.settings = {{"hidden_width", std::int64_t{128}}, {"dropout", 0.2}};
  return job;
}

std::vector<float> random_values(std::size_t size, std::uint64_t seed) {
  Random rng(seed);
  std::vector<float> values(size);
  for (auto& v : values) v = static_cast<float>(rng.uniform() - 0.5);
  return values;
}

}  // namespace

TEST_CASE("each shard receives only its range's floats of every gradient, sync and async (K = 1, 2, 3)") {
  const auto data = synthetic_data(256, 784, 10, 21);
  for (const auto mode : {TrainingMode::sync, TrainingMode::async}) {
    std::vector<std::string> sizes;  // per K: what each shard takes of a gradient
    for (std::size_t servers : {1, 2, 3}) {
      CAPTURE(servers);
      CAPTURE(mode == TrainingMode::sync);
      auto job = cut_job(mode, 4);
      job.cluster.servers = servers;
      const auto run = run_through_relays(job, data);
      REQUIRE(run.shards.size() == servers);
      std::size_t total = 0, foreign = 0;
      std::uint64_t largest = 0;
      std::string shard_sizes;
      for (const auto& shard : run.shards) {
        const auto& first = shard.received->pushes.front();
        shard_sizes += fmt::format("{}{} floats, {} B message", shard_sizes.empty() ? "" : " + ", first.floats,
                                   first.message_bytes);
        total += shard.floats;
        foreign += shard.foreign_chunks;
        // Sync: 4 steps of 2 gradients; async: 4 x 2 pushes.
        REQUIRE(shard.received->pushes.size() == 8);
        for (std::size_t p = 0; p < shard.received->pushes.size(); ++p) {
          const auto& push = shard.received->pushes[p];
          CHECK(push.floats == shard.floats);
          // A sync push carries none: the shards exchange the squares of their step's sum.
          CHECK(push.squares == (mode == TrainingMode::async ? shard.foreign_chunks : 0));
          CHECK(push.wire_bytes == 12 + 4 * shard.floats);
          // The rest of the message: metadata, timings and 8 bytes per sum of squares.
          CHECK(push.message_bytes > push.wire_bytes);
          CHECK(push.message_bytes <= push.wire_bytes + 128 + 8 * push.squares);
          largest = std::max(largest, push.wire_bytes);
        }
      }
      CHECK(total == 118282);
      CHECK((servers == 1 ? foreign == 0 : foreign > 0));  // relu1.W is clipped across the cut
      // Balanced on the norm grid: no shard takes more than its share and one chunk.
      CHECK(largest <= 12 + 4 * (118282 / servers + norm_chunk_size));
      sizes.push_back(fmt::format("K={}: {}", servers, shard_sizes));
    }
    MESSAGE(fmt::format("{} fp32, each shard's first gradient: {}", mode == TrainingMode::sync ? "sync" : "async",
                        fmt::join(sizes, "; ")));
  }
}

TEST_CASE("sync on 2 and 3 shards clips cut arrays by the norm of the summed gradient, bit for bit as one server") {
  // A clip far below the gradients' norms, so every step clips relu1.W, which every K > 1 cuts: its
  // norm needs the squares of the other shards' parts of the sum, not of any single gradient.
  const auto data = synthetic_data(256, 784, 10, 24);
  auto job = cut_job(TrainingMode::sync, 5);
  job.cluster.num_workers = 3;
  job.optimizer.settings = {{"grad_clip", 0.05}};
  const auto reference = run_through_relays(job, data);
  auto unclipped_job = job;
  unclipped_job.optimizer.settings = {{"grad_clip", 0.0}};
  CHECK_FALSE(run_through_relays(unclipped_job, data).summary.final_weights.values ==
              reference.summary.final_weights.values);  // the clip binds
  for (std::size_t servers : {2, 3}) {
    CAPTURE(servers);
    job.cluster.servers = servers;
    const auto run = run_through_relays(job, data);
    CHECK(run.summary.final_weights.version == 5);
    CHECK(run.summary.final_weights.values == reference.summary.final_weights.values);
    for (std::size_t i = 0; i < run.shards.size(); ++i) {
      CAPTURE(i);
      const auto& shard = run.shards[i];
      // Sliced pushes without squares: 5 steps of 3 gradients.
      REQUIRE(shard.received->pushes.size() == 15);
      for (const auto& push : shard.received->pushes) {
        CHECK(push.floats == shard.floats);
        CHECK(push.squares == 0);
      }
      // Once per step, each shard that holds part of a cut array tells this one its squares of the
      // step's sum: one message per such shard, all the sums this shard's clip norms need.
      REQUIRE(shard.foreign_chunks > 0);
      const auto steps = squares_per_step(shard);
      REQUIRE(steps.size() == 5);
      std::uint64_t version = 0;
      for (const auto& [from, told] : steps) {
        CHECK(from == version++);
        CHECK(told.first >= 1);
        CHECK(told.first <= servers - 1);
        CHECK(told.second == shard.foreign_chunks);
      }
      if (i > 0) CHECK(steps.begin()->second.first == squares_per_step(run.shards[i]).begin()->second.first);
    }
    MESSAGE(fmt::format("sync K={}: each shard's push {} B; squares told per step {}", servers,
                        [&] {
                          std::vector<std::uint64_t> bytes;
                          for (const auto& shard : run.shards) bytes.push_back(shard.received->pushes.front().message_bytes);
                          return fmt::format("{}", fmt::join(bytes, " + "));
                        }(),
                        [&] {
                          std::vector<std::size_t> sums;
                          for (const auto& shard : run.shards) sums.push_back(shard.foreign_chunks);
                          return fmt::format("{}", fmt::join(sums, " + "));
                        }()));
  }
  // Async: each push carries its own gradient's squares; the shards tell each other nothing.
  job.cluster.mode = TrainingMode::async;
  job.cluster.servers = 2;
  for (const auto& shard : run_through_relays(job, data).shards) CHECK(shard.received->squares.empty());
}

TEST_CASE("top-k and bf16 sync runs on 2 and 3 shards give the weights of one server, bit for bit") {
  // Top-k selects over the whole gradient before it is cut, so shards change nothing in what is sent.
  const auto data = synthetic_data(256, 784, 10, 22);
  for (const auto wire : {WireEncoding::bf16, WireEncoding::topk}) {
    CAPTURE(wire_name(wire));
    auto job = cut_job(TrainingMode::sync, 4);
    job.cluster.wire = wire;
    const auto reference = run_through_relays(job, data);
    for (std::size_t servers : {2, 3}) {
      CAPTURE(servers);
      job.cluster.servers = servers;
      const auto run = run_through_relays(job, data);
      CHECK(run.summary.final_weights.values == reference.summary.final_weights.values);
      std::uint64_t bytes = 0, fp32_bytes = 0;
      for (const auto& shard : run.shards)
        for (const auto& push : shard.received->pushes) {
          CHECK(push.floats == shard.floats);
          if (wire == WireEncoding::bf16) CHECK(push.wire_bytes == 12 + 2 * shard.floats);
          bytes += push.wire_bytes;
          fp32_bytes += 12 + 4 * push.floats;
        }
      // Top-k: the shards share the whole gradient's entries (not evenly: large entries cluster).
      if (wire == WireEncoding::topk) CHECK(bytes * 10 < fp32_bytes);
    }
  }
}

TEST_CASE("async runs on 2 shards train with every wire encoding") {
  const auto data = synthetic_data(256, 784, 10, 23);
  for (const auto wire : {WireEncoding::fp32, WireEncoding::bf16, WireEncoding::topk}) {
    CAPTURE(wire_name(wire));
    auto job = cut_job(TrainingMode::async, 30);
    job.cluster.wire = wire;
    job.cluster.servers = 2;
    const auto run = run_through_relays(job, data);
    CHECK(run.summary.steps == 60);
    CHECK(run.summary.final_weights.version == 60);
    CHECK(run.summary.final_accuracy >= 0.5);  // 10 classes: chance is 0.1
  }
}

namespace {

// The 784-10 model's server state, and the same state split into two shards.
std::pair<std::shared_ptr<ParameterServerState>, std::vector<std::shared_ptr<ParameterServerState>>> two_shards(
    const TrainingJob& job) {
  auto whole = initial_server_state(job, 784, 10);
  REQUIRE(whole.ok());
  auto shards = shard_server_state(job, **whole, 2);
  REQUIRE(shards.ok());
  return {*whole, *shards};
}

// A peer shard that only notes the squares it is told.
ShardPeer spawn_noting_peer(caf::actor_system& system, std::shared_ptr<Received> told) {
  return system.spawn([told]() -> ShardPeer::behavior_type {
    return {[told](squares_atom, const ShardSquares& squares) { told->note_squares(squares); }};
  });
}

}  // namespace

TEST_CASE("a shard refuses a gradient that is not its part, naming the worker and what it expected") {
  ActorConfig config(1);
  caf::actor_system system{config};
  auto job = cut_job(TrainingMode::async, 1);
  job.cluster.servers = 2;
  const auto [whole, shards] = two_shards(job);
  const auto& layout = whole->layout;
  const auto state = shards[1];
  const auto begin = state->begin, end = state->end;
  const auto foreign = state->optimizer->foreign_norm_ranges();
  REQUIRE(!foreign.empty());
  auto server = spawn_parameter_server(system, state);
  caf::scoped_actor self{system};
  const auto gradient = random_values(layout.total_size(), 3);
  auto push = [&](std::size_t from, std::size_t to, std::vector<double> squares) {
    Gradients gradients;
    gradients.layout_hash = layout.hash();
    gradients.worker = 5;
    gradients.values = FloatBuffer::copy_of(gradient.data() + from, to - from);
    gradients.foreign_squares = std::move(squares);
    std::string refusal;
    self->request(server, caf::infinite, apply_atom::value, gradients)
        .receive([&](Weights& weights) { CHECK(weights.values.size() == end - begin); },
                 [&](caf::error& error) { refusal = error_text(system, error); });
    return refusal;
  };
  const std::vector<double> squares(foreign.size(), 1.0);
  // The whole gradient, as a shard took it before, and another shard's part.
  for (const auto& [from, to] : {std::pair<std::size_t, std::size_t>{0, layout.total_size()}, {0, begin}}) {
    const auto refusal = push(from, to, squares);
    CAPTURE(refusal);
    CHECK(refusal.find("gradients from worker 5") != std::string::npos);
    CHECK(refusal.find(fmt::format("expected the {} floats [{}, {})", end - begin, begin, end)) != std::string::npos);
  }
  // Its part without the sums of squares its clip norms need.
  const auto missing = push(begin, end, {});
  CHECK(missing.find(fmt::format("worker 5 carry 0 sums of squares of chunks held by other shards; expected {}",
                                 foreign.size())) != std::string::npos);
  CHECK(push(begin, end, squares).empty());  // its part
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
}

TEST_CASE("a gradient slicer refuses plans that do not tile the layout and gradients of another size") {
  const auto plan = [](std::uint64_t begin, std::uint64_t end, std::vector<GradientRange> foreign = {}) {
    return ShardPlan{begin, end, std::move(foreign)};
  };
  CHECK(GradientSlicer::make({plan(0, 10), plan(10, 20)}).ok());
  CHECK_FALSE(GradientSlicer::make({}).ok());
  CHECK_FALSE(GradientSlicer::make({plan(0, 10), plan(12, 20)}).ok());          // a gap
  CHECK_FALSE(GradientSlicer::make({plan(0, 10), plan(10, 10)}).ok());          // an empty shard
  CHECK_FALSE(GradientSlicer::make({plan(0, 10, {{5, 2}}), plan(10, 20)}).ok());  // its own floats
  CHECK_FALSE(GradientSlicer::make({plan(0, 10, {{15, 9}}), plan(10, 20)}).ok());  // past the end
  auto slicer = GradientSlicer::make({plan(0, 10, {{10, 4}, {14, 6}}), plan(10, 20, {{0, 10}})});
  REQUIRE(slicer.ok());
  const auto values = random_values(20, 4);
  Gradients whole;
  whole.worker = 2;
  whole.values = FloatBuffer::copy_of(values.data(), values.size());
  const auto parts = slicer->slice(whole);
  REQUIRE(parts.ok());
  REQUIRE(parts->size() == 2);
  CHECK((*parts)[0].values == FloatBuffer::copy_of(values.data(), 10));
  CHECK((*parts)[1].values == FloatBuffer::copy_of(values.data() + 10, 10));
  CHECK((*parts)[0].foreign_squares == std::vector<double>{sum_of_squares(values.data() + 10, 4),
                                                            sum_of_squares(values.data() + 14, 6)});
  CHECK((*parts)[1].foreign_squares == std::vector<double>{sum_of_squares(values.data(), 10)});
  // A sync push carries no squares: the shards exchange those of the step's sum.
  const auto without = slicer->slice(whole, false);
  REQUIRE(without.ok());
  CHECK((*without)[0].foreign_squares.empty());
  CHECK((*without)[1].values == FloatBuffer::copy_of(values.data() + 10, 10));
  whole.values = FloatBuffer::copy_of(values.data(), 19);
  const auto short_one = slicer->slice(whole);
  REQUIRE_FALSE(short_one.ok());
  CHECK(short_one.error() == "gradients from worker 2 hold 19 floats; the 2 server shards hold 20");
}

TEST_CASE("a sync shard tells its peers its squares once per step, and refuses squares of another step") {
  ActorConfig config(1);
  caf::actor_system system{config};
  auto job = cut_job(TrainingMode::sync, 1);
  job.cluster.num_workers = 1;
  const auto [whole, shards] = two_shards(job);
  const auto& layout = whole->layout;
  std::vector<ShardPlan> plans;
  for (const auto& state : shards) plans.push_back(plan_of(*state));
  REQUIRE(!plans[0].foreign_chunks.empty());
  REQUIRE(!plans[1].foreign_chunks.empty());
  // Shard 1 for real; shard 0 only notes what it is told.
  auto server = spawn_parameter_server(system, shards[1]);
  auto told = std::make_shared<Received>();
  auto peer = spawn_noting_peer(system, told);
  caf::scoped_actor self{system};
  auto error_of = [&](auto&&... xs) {
    std::string refusal;
    self->request(server, caf::infinite, std::forward<decltype(xs)>(xs)...)
        .receive([&](bool) {}, [&](caf::error& error) { refusal = error_text(system, error); });
    return refusal;
  };
  const std::vector<ShardPeer> peers = {peer, caf::actor_cast<ShardPeer>(server)};
  CHECK(error_of(peers_atom::value, std::uint32_t{0}, peers, plans).find("told it is shard 0 holding floats") !=
        std::string::npos);
  CHECK(error_of(peers_atom::value, std::uint32_t{1}, peers, plans).empty());
  self->request(server, caf::infinite, barrier_atom::value, std::vector<std::uint32_t>{0}, std::uint32_t{1})
      .receive([](std::vector<std::uint32_t>&) {}, [](caf::error&) { FAIL("barrier refused"); });

  const auto gradient = random_values(layout.total_size(), 8);
  auto push = [&](std::uint64_t version, std::vector<double> squares = {}) {
    Gradients gradients;
    gradients.version = version;
    gradients.layout_hash = layout.hash();
    gradients.values = FloatBuffer::copy_of(gradient.data(), gradient.size()).slice(plans[1].begin, plans[1].end);
    gradients.foreign_squares = std::move(squares);
    return self->request(server, caf::infinite, apply_atom::value, std::move(gradients));
  };
  auto wait_for_squares = [&](std::size_t count) { REQUIRE(told->wait_for_squares(count)); };
  // A sync push carries no squares of its own.
  std::string refusal;
  push(0, std::vector<double>(plans[1].foreign_chunks.size(), 1.0))
      .receive([](Weights&) {}, [&](caf::error& error) { refusal = error_text(system, error); });
  CHECK(refusal.find("carry " + std::to_string(plans[1].foreign_chunks.size()) + " sums of squares") !=
        std::string::npos);
  for (std::uint64_t version = 0; version < 3; ++version) {
    auto answer = push(version);
    wait_for_squares(version + 1);
    caf::anon_send(server, squares_atom::value,
                   ShardSquares{version, 0, std::vector<double>(plans[1].foreign_chunks.size(), 4.0), {0}});
    answer.receive([&](Weights& weights) { CHECK(weights.version == version + 1); },
                   [](caf::error& error) { FAIL(to_string(error)); });
  }
  {
    const std::lock_guard<std::mutex> lock(told->mutex);
    REQUIRE(told->squares.size() == 3);  // once per step
    for (std::uint64_t version = 0; version < 3; ++version) {
      CHECK(told->squares[version].version == version);
      CHECK(told->squares[version].shard == 1);
      CHECK(told->squares[version].squares.size() == plans[0].foreign_chunks.size());
      CHECK(told->squares[version].workers == std::vector<std::uint32_t>{0});
    }
  }
  // Squares of a step the shard is not at: the shards are out of step, and the run ends.
  auto answer = push(3);
  caf::anon_send(server, squares_atom::value,
                 ShardSquares{7, 0, std::vector<double>(plans[1].foreign_chunks.size(), 4.0), {0}});
  refusal.clear();
  answer.receive([](Weights&) { FAIL("stepped with squares of another step"); },
                 [&](caf::error& error) { refusal = error_text(system, error); });
  CAPTURE(refusal);
  CHECK(refusal.find("server shard 1 refused the sums of squares from shard 0: they are of the step from version 7, "
                     "and this shard is at version 3; the shards are out of step") != std::string::npos);
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(peer, caf::exit_reason::user_shutdown);
}

namespace {

// Sync shards spawned from their states and told each other (as the driver does before the first step).
std::vector<ParameterServerActor> introduced_shards(caf::actor_system& system, caf::scoped_actor& self,
                                                    const std::vector<std::shared_ptr<ParameterServerState>>& states,
                                                    const std::vector<ShardPlan>& plans) {
  std::vector<ParameterServerActor> servers;
  std::vector<ShardPeer> peers;
  for (const auto& state : states) {
    servers.push_back(spawn_parameter_server(system, state));
    peers.push_back(caf::actor_cast<ShardPeer>(servers.back()));
  }
  for (std::uint32_t i = 0; i < servers.size(); ++i)
    self->request(servers[i], caf::infinite, peers_atom::value, i, peers, plans)
        .receive([](bool) {}, [&](caf::error& error) { FAIL(error_text(system, error)); });
  return servers;
}

// Worker `worker`'s gradient `values[worker]` as shard `shard` receives it: its plan's floats only.
Gradients shard_part(const ParameterLayout& layout, const std::vector<ShardPlan>& plans,
                     const std::vector<std::vector<float>>& values, std::uint32_t worker, std::size_t shard) {
  Gradients gradients;
  gradients.layout_hash = layout.hash();
  gradients.worker = worker;
  gradients.samples = 8;
  gradients.values =
      FloatBuffer::copy_of(values[worker].data(), values[worker].size()).slice(plans[shard].begin, plans[shard].end);
  return gradients;
}

// Every shard's master weights, joined in shard order; each must be at `version`.
std::vector<float> joined_masters(caf::scoped_actor& self, const std::vector<ParameterServerActor>& servers,
                                  std::uint64_t version) {
  std::vector<float> joined;
  for (const auto& server : servers)
    self->request(server, caf::infinite, master_atom::value)
        .receive([&](Weights& weights) {
                   CHECK(weights.version == version);
                   joined.insert(joined.end(), weights.values.data(), weights.values.data() + weights.values.size());
                 },
                 [](caf::error&) { FAIL("no master"); });
  return joined;
}

}  // namespace

TEST_CASE("sync shards step with the same workers' gradients when a worker is lost after reaching only one shard") {
  auto job = cut_job(TrainingMode::sync, 1);
  job.cluster.num_workers = 2;
  const auto kept = random_values(118282, 11);
  const auto lost = random_values(118282, 12);
  // The lost worker's gradient reached shard `reached` and not the other; then the driver dropped it.
  for (std::size_t reached : {0, 1}) {
    CAPTURE(reached);
    ActorConfig config(2);
    caf::actor_system system{config};
    const auto [whole, shards] = two_shards(job);
    const auto& layout = whole->layout;
    REQUIRE(layout.total_size() == kept.size());
    std::vector<ShardPlan> plans;
    for (const auto& state : shards) plans.push_back(plan_of(*state));
    REQUIRE(!plans[0].foreign_chunks.empty());  // the clip norm of a cut array needs both shards
    auto gradients_of = [&](const std::vector<float>& values, std::uint32_t worker, std::size_t begin,
                            std::size_t end) {
      Gradients gradients;
      gradients.layout_hash = layout.hash();
      gradients.worker = worker;
      gradients.samples = 8;
      gradients.values = FloatBuffer::copy_of(values.data(), values.size()).slice(begin, end);
      return gradients;
    };
    caf::scoped_actor self{system};
    // One server's store stepping with the kept worker's gradient alone.
    ParameterStore one(layout, whole->weights, std::move(whole->optimizer));
    const float* kept_gradient = kept.data();
    REQUIRE_FALSE(one.apply_gradients(&kept_gradient, 1, nullptr, 0.0f).has_value());
    CHECK(one.version() == 1);
    const std::vector<float> expected(one.weights().get(), one.weights().get() + one.size());

    const auto servers = introduced_shards(system, self, shards, plans);
    auto barrier = [&](std::vector<std::uint32_t> members) {
      const auto needed = static_cast<std::uint32_t>(members.size());
      for (const auto& server : servers)
        self->request(server, caf::infinite, barrier_atom::value, members, needed)
            .receive([](std::vector<std::uint32_t>&) {}, [](caf::error&) { FAIL("barrier refused"); });
    };
    barrier({0, 1});
    auto kept_to_0 = self->request(servers[0], caf::infinite, apply_atom::value,
                                   gradients_of(kept, 0, plans[0].begin, plans[0].end));
    auto kept_to_1 = self->request(servers[1], caf::infinite, apply_atom::value,
                                   gradients_of(kept, 0, plans[1].begin, plans[1].end));
    auto lost_to_one = self->request(servers[reached], caf::infinite, apply_atom::value,
                                     gradients_of(lost, 1, plans[reached].begin, plans[reached].end));
    barrier({0});  // the shard that has both gradients is already telling the other its squares of both
    for (auto* answer : {&kept_to_0, &kept_to_1})
      answer->receive([](Weights& weights) { CHECK(weights.version == 1); },
                      [&](caf::error& error) { FAIL(error_text(system, error)); });
    // The lost worker's gradient is dropped: answered with the weights it came from.
    lost_to_one.receive([](Weights& weights) { CHECK(weights.version == 0); },
                        [&](caf::error& error) { FAIL(error_text(system, error)); });
    const auto stepped = joined_masters(self, servers, 1);
    REQUIRE(stepped.size() == expected.size());
    CHECK(std::memcmp(stepped.data(), expected.data(), stepped.size() * sizeof(float)) == 0);
    for (const auto& server : servers) caf::anon_send_exit(server, caf::exit_reason::user_shutdown);

  }
}

TEST_CASE("with a backup worker every sync shard sums the gradients shard 0 took, whichever reached it first") {
  auto job = cut_job(TrainingMode::sync, 1);
  job.cluster.num_workers = 3;
  job.cluster.backup_workers = 1;
  std::vector<std::vector<float>> values;
  for (std::uint64_t k = 0; k < 3; ++k) values.push_back(random_values(118282, 21 + k));
  ActorConfig config(2);
  caf::actor_system system{config};
  const auto [whole, shards] = two_shards(job);
  const auto& layout = whole->layout;
  REQUIRE(layout.total_size() == values[0].size());
  std::vector<ShardPlan> plans;
  for (const auto& state : shards) plans.push_back(plan_of(*state));
  auto part_of = [&](std::uint32_t worker, std::size_t shard) { return shard_part(layout, plans, values, worker, shard); };
  caf::scoped_actor self{system};
  // One server's store stepping with workers 0 and 1, the first two to reach shard 0.
  ParameterStore one(layout, whole->weights, std::move(whole->optimizer));
  const float* taken[] = {values[0].data(), values[1].data()};
  REQUIRE_FALSE(one.apply_gradients(taken, 2, nullptr, 0.0f).has_value());
  const std::vector<float> expected(one.weights().get(), one.weights().get() + one.size());

  const auto servers = introduced_shards(system, self, shards, plans);
  for (const auto& server : servers)
    self->request(server, caf::infinite, barrier_atom::value, std::vector<std::uint32_t>{0, 1, 2}, std::uint32_t{2})
        .receive([](std::vector<std::uint32_t>&) {}, [](caf::error&) { FAIL("barrier refused"); });
  // Shard 1 has workers 2 and 0 (enough for a step of its own) before worker 1's part reaches it.
  auto late_to_1 = self->request(servers[1], caf::infinite, apply_atom::value, part_of(2, 1));
  auto first_to_1 = self->request(servers[1], caf::infinite, apply_atom::value, part_of(0, 1));
  auto first_to_0 = self->request(servers[0], caf::infinite, apply_atom::value, part_of(0, 0));
  auto second_to_0 = self->request(servers[0], caf::infinite, apply_atom::value, part_of(1, 0));
  auto second_to_1 = self->request(servers[1], caf::infinite, apply_atom::value, part_of(1, 1));
  for (auto* answer : {&first_to_0, &second_to_0, &first_to_1, &second_to_1})
    answer->receive([](Weights& weights) { CHECK(weights.version == 1); },
                    [&](caf::error& error) { FAIL(error_text(system, error)); });
  // The step did not take worker 2: dropped, and answered with the step's weights, as shard 0 would.
  late_to_1.receive([](Weights& weights) { CHECK(weights.version == 1); },
                    [&](caf::error& error) { FAIL(error_text(system, error)); });
  const auto stepped = joined_masters(self, servers, 1);
  REQUIRE(stepped.size() == expected.size());
  CHECK(std::memcmp(stepped.data(), expected.data(), stepped.size() * sizeof(float)) == 0);
  for (const auto& server : servers) caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
}

TEST_CASE("with backup workers a worker shard 0 took and the driver then dropped leaves the step to the others") {
  // 4 workers, 2 backups: shard 0 takes workers 0 and 3; worker 3 is lost before its push reaches shard 1,
  // which would otherwise wait for it forever. Both shards step with worker 0 alone.
  auto job = cut_job(TrainingMode::sync, 1);
  job.cluster.num_workers = 4;
  job.cluster.backup_workers = 2;
  std::vector<std::vector<float>> values;
  for (std::uint64_t k = 0; k < 4; ++k) values.push_back(random_values(118282, 31 + k));
  ActorConfig config(2);
  caf::actor_system system{config};
  const auto [whole, shards] = two_shards(job);
  const auto& layout = whole->layout;
  std::vector<ShardPlan> plans;
  for (const auto& state : shards) plans.push_back(plan_of(*state));
  auto part_of = [&](std::uint32_t worker, std::size_t shard) { return shard_part(layout, plans, values, worker, shard); };
  caf::scoped_actor self{system};
  ParameterStore one(layout, whole->weights, std::move(whole->optimizer));
  const float* taken[] = {values[0].data()};
  REQUIRE_FALSE(one.apply_gradients(taken, 1, nullptr, 0.0f).has_value());
  const std::vector<float> expected(one.weights().get(), one.weights().get() + one.size());

  const auto servers = introduced_shards(system, self, shards, plans);
  // Stopped however the case ends: a shard still waiting would keep the actor system from shutting down.
  struct Stopped {
    const std::vector<ParameterServerActor>& servers;
    ~Stopped() {
      for (const auto& server : servers) caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    }
  } stopped{servers};
  const auto barrier = [&](std::vector<std::uint32_t> members) {
    for (const auto& server : servers)
      self->request(server, std::chrono::seconds(10), barrier_atom::value, members, std::uint32_t{2})
          .receive([](std::vector<std::uint32_t>&) {}, [](caf::error&) { FAIL("barrier refused"); });
  };
  barrier({0, 1, 2, 3});
  const auto timeout = std::chrono::seconds(10);
  auto first_to_0 = self->request(servers[0], timeout, apply_atom::value, part_of(0, 0));
  auto lost_to_0 = self->request(servers[0], timeout, apply_atom::value, part_of(3, 0));
  barrier({0, 1, 2});  // worker 3 is lost
  auto first_to_1 = self->request(servers[1], timeout, apply_atom::value, part_of(0, 1));
  auto other_to_1 = self->request(servers[1], timeout, apply_atom::value, part_of(1, 1));
  auto other_to_0 = self->request(servers[0], timeout, apply_atom::value, part_of(1, 0));
  for (auto* answer : {&first_to_0, &first_to_1, &other_to_1, &other_to_0})
    answer->receive([](Weights& weights) { CHECK(weights.version == 1); },
                    [&](caf::error& error) { FAIL(error_text(system, error)); });
  lost_to_0.receive([](Weights&) {}, [&](caf::error& error) { FAIL(error_text(system, error)); });
  const auto stepped = joined_masters(self, servers, 1);
  REQUIRE(stepped.size() == expected.size());
  CHECK(std::memcmp(stepped.data(), expected.data(), stepped.size() * sizeof(float)) == 0);
}

TEST_CASE("a sync shard takes a peer's second word only for fewer workers, in ascending order") {
  auto job = cut_job(TrainingMode::sync, 1);
  job.cluster.num_workers = 2;
  const auto gradient = random_values(118282, 21);
  // Shard 1 for real, told squares by a stand-in for shard 0; the answer to worker 0's push, or why the
  // shard refused.
  auto run = [&](const std::vector<std::vector<std::uint32_t>>& told_workers) {
    ActorConfig config(1);
    caf::actor_system system{config};
    const auto [whole, shards] = two_shards(job);
    std::vector<ShardPlan> plans;
    for (const auto& state : shards) plans.push_back(plan_of(*state));
    auto server = spawn_parameter_server(system, shards[1]);
    auto peer = system.spawn([]() -> ShardPeer::behavior_type { return {[](squares_atom, const ShardSquares&) {}}; });
    caf::scoped_actor self{system};
    const std::vector<ShardPeer> peers = {peer, caf::actor_cast<ShardPeer>(server)};
    self->request(server, caf::infinite, peers_atom::value, std::uint32_t{1}, peers, plans)
        .receive([](bool) {}, [&](caf::error& error) { FAIL(error_text(system, error)); });
    for (const auto& workers : told_workers)
      self->send(server, squares_atom::value,
                 ShardSquares{0, 0, std::vector<double>(plans[1].foreign_chunks.size(), 1.0), workers});
    self->request(server, caf::infinite, barrier_atom::value, std::vector<std::uint32_t>{0}, std::uint32_t{1})
        .receive([](std::vector<std::uint32_t>&) {}, [](caf::error&) { FAIL("barrier refused"); });
    Gradients gradients;
    gradients.layout_hash = whole->layout.hash();
    gradients.values = FloatBuffer::copy_of(gradient.data(), gradient.size()).slice(plans[1].begin, plans[1].end);
    std::string outcome;
    self->request(server, caf::infinite, apply_atom::value, std::move(gradients))
        .receive([&](Weights& weights) { outcome = fmt::format("version {}", weights.version); },
                 [&](caf::error& error) { outcome = error_text(system, error); });
    caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(peer, caf::exit_reason::user_shutdown);
    return outcome;
  };
  CHECK(run({{0}}) == "version 1");
  // Told again for fewer workers (it dropped worker 1's gradient to agree with a third shard).
  CHECK(run({{0, 1}, {0}}) == "version 1");
  const auto twice = run({{0}, {0}});
  CHECK(twice.find("server shard 1 refused the sums of squares from shard 0: it already told them for this step") !=
        std::string::npos);
  const auto more = run({{0}, {0, 1}});
  CHECK(more.find("it already told them for this step") != std::string::npos);
  const auto unordered = run({{1, 0}});
  CHECK(unordered.find("its workers are not in ascending order") != std::string::npos);
}

TEST_CASE("a pipelined sync shard keeps a peer's squares of the next step until it has taken this one") {
  // A peer that has stepped may tell its squares of the next step first: with 3 shards, its word and
  // the third shard's word for this step come from two senders, in either order.
  ActorConfig config(2);
  caf::actor_system system{config};
  auto job = cut_job(TrainingMode::sync, 1);
  job.cluster.num_workers = 1;
  job.cluster.pipeline = true;
  const auto [whole, shards] = two_shards(job);
  const auto& layout = whole->layout;
  REQUIRE(shards[1]->pipelined);
  std::vector<ShardPlan> plans;
  for (const auto& state : shards) plans.push_back(plan_of(*state));
  REQUIRE(!plans[1].foreign_chunks.empty());
  auto server = spawn_parameter_server(system, shards[1]);
  auto told = std::make_shared<Received>();
  auto peer = spawn_noting_peer(system, told);
  caf::scoped_actor self{system};
  const std::vector<ShardPeer> peers = {peer, caf::actor_cast<ShardPeer>(server)};
  self->request(server, caf::infinite, peers_atom::value, std::uint32_t{1}, peers, plans)
      .receive([](bool) {}, [](caf::error&) { FAIL("peers refused"); });
  self->request(server, caf::infinite, barrier_atom::value, std::vector<std::uint32_t>{0}, std::uint32_t{1})
      .receive([](std::vector<std::uint32_t>&) {}, [](caf::error&) { FAIL("barrier refused"); });
  const auto gradient = random_values(layout.total_size(), 9);
  auto push = [&](std::uint64_t version) {
    Gradients gradients;
    gradients.version = version;
    gradients.layout_hash = layout.hash();
    gradients.values = FloatBuffer::copy_of(gradient.data(), gradient.size()).slice(plans[1].begin, plans[1].end);
    return self->request(server, caf::infinite, apply_atom::value, std::move(gradients));
  };
  // Both pipelined pushes come from the starting weights; the second is held for step 2.
  auto first = push(0);
  auto second = push(0);
  const auto squares = [&](std::uint64_t version) {
    return ShardSquares{version, 0, std::vector<double>(plans[1].foreign_chunks.size(), 4.0), {0}};
  };
  // The peer's word for the next step comes before its word for this one.
  caf::anon_send(server, squares_atom::value, squares(1));
  caf::anon_send(server, squares_atom::value, squares(0));
  std::vector<std::uint64_t> versions;
  for (auto* answer : {&first, &second})
    answer->receive([&](Weights& weights) { versions.push_back(weights.version); },
                    [](caf::error& error) { FAIL(to_string(error)); });
  CHECK(versions == std::vector<std::uint64_t>{1, 2});
  REQUIRE(told->wait_for_squares(2));
  {
    const std::lock_guard<std::mutex> lock(told->mutex);
    REQUIRE(told->squares.size() == 2);  // this shard told its own, once per step
    CHECK(told->squares[0].version == 0);
    CHECK(told->squares[1].version == 1);
  }
  // Two steps ahead is still out of step.
  auto third = push(2);
  caf::anon_send(server, squares_atom::value, squares(4));
  std::string refusal;
  third.receive([](Weights&) { FAIL("stepped with squares two steps ahead"); },
                [&](caf::error& error) { refusal = error_text(system, error); });
  CAPTURE(refusal);
  CHECK(refusal.find("they are of the step from version 4, and this shard is at version 2") != std::string::npos);
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  caf::anon_send_exit(peer, caf::exit_reason::user_shutdown);
}

TEST_CASE("an interrupted sync run on shards checkpoints once every shard has taken the last step the workers fed") {
  // Shard 1 hears shard 0's squares 20 ms late, so shard 0 takes each step first. When the signal
  // comes the workers stop at the nearer stop the driver names, or (pipelined) after the pushes they
  // have sent; the final state waits for every shard to take the last step every worker fed (else the
  // shards' states would not join).
  for (const bool pipeline : {false, true}) {
    CAPTURE(pipeline);
    const auto data = synthetic_data(256, 784, 10, 28);
    auto job = cut_job(TrainingMode::sync, 1000000);  // only the signal ends it
    job.cluster.servers = 2;
    job.cluster.pipeline = pipeline;
    RelayOptions options;
    options.late_shard = 1;
    options.squares_delay = std::chrono::milliseconds{20};
    auto interrupt = std::make_shared<std::atomic<int>>(0);
    options.hooks.interrupt = interrupt;
    std::vector<TrainingCheckpoint> checkpoints;
    options.hooks.on_checkpoint = [&checkpoints](const TrainingCheckpoint& checkpoint) {
      checkpoints.push_back(checkpoint);
    };
    std::thread signal([interrupt] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      interrupt->store(2);
    });
    const auto run = run_through_relays(job, data, options);
    signal.join();
    CHECK(run.summary.interrupted_by == 2);
    REQUIRE(checkpoints.size() == 1);
    CHECK(checkpoints[0].version == run.summary.final_weights.version);
    CHECK(checkpoints[0].weights.size() == tutorial_layout().total_size());
    MESSAGE("stopped at step " << checkpoints[0].version << ", iteration " << checkpoints[0].iteration);
  }
}
