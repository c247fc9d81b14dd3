// Two views of the step: the server's arithmetic replayed without actors (what the target is about),
// and the real ParameterServer actor answering a request, messaging included.
#include "bench/server_cost.hpp"

#include <algorithm>
#include <atomic>
#include <stdexcept>
#include <thread>

#include "actors/actor_config.hpp"
#include "payloads/float_buffer.hpp"
#include "actors/gradient_slicer.hpp"
#include "runtime/idle_help.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "store/parameter_store.hpp"
#include "runtime/spin_pause.hpp"
#include "caf/actor_system.hpp"
#include "caf/scoped_actor.hpp"
#include "model/gradient_sum.hpp"
#include "model/minibatcher.hpp"

namespace psgrad::bench {

namespace {

// Two real gradients (of two batches), so clipping and Adam see realistic values.
std::vector<Gradients> two_gradients(const BenchContext& context, const Model& reference) {
  auto model = build_initialized_model(context.job, context.data.train->width, context.data.train->num_classes).value();
  Minibatcher batches(context.data.train, context.job.training.batch_size, worker_data_seed(context.job.training.seed, 0));
  Random dropout(1);
  std::vector<Gradients> all;
  for (std::uint32_t k = 0; k < 2; ++k) {
    const auto batch = batches.next();
    Gradients gradients;
    gradients.layout_hash = reference.layout().hash();
    gradients.worker = k;
    gradients.samples = static_cast<std::uint32_t>(batch.size);
    gradients.loss = model.compute_gradients(batch.inputs, batch.targets, dropout);
    gradients.values = FloatBuffer::copy_of(model.gradients().data(), model.gradients().size());
    all.push_back(std::move(gradients));
  }
  return all;
}

}  // namespace

void measure_server_cost(BenchContext& context, Report& report) {
  const auto& train = context.data.train;
  auto model = build_initialized_model(context.job, train->width, train->num_classes).value();
  const auto gradients = two_gradients(context, model);
  const std::size_t size = model.parameter_count();
  const std::size_t repeats = std::max<std::size_t>(context.effort.repeats, context.options.quick ? 1 : 5);
  const double seconds = context.effort.seconds_per_sample / 5.0;
  const char* section = "5 server";

  // The server's steps as its ParameterStore takes them. Sync: the workers have let go of the weights,
  // so the sum of 2 gradients and Adam run in place, on the threads the server gets for it. Async: a
  // worker still computes on the current weights (`held`), so the step writes a free buffer.
  ParameterStore store(model.layout(), std::vector<float>(model.weights().begin(), model.weights().end()),
                       std::move(build_optimizer(context.job, model.layout()).value()));
  const float* both[] = {gradients[0].values.data(), gradients[1].values.data()};
  auto sync_step = [&] { store.apply_gradients(both, 2, nullptr, 0.0f); };
  Weights held;
  auto snapshot = [&] { held = Weights{store.version(), model.layout().hash(), FloatBuffer(store.weights(), size)}; };
  auto async_step = [&] {
    snapshot();
    store.apply_gradients(both, 1, nullptr, 0.0f);
  };
  std::vector<float> sum(size);
  auto add_gradients = [&] { sum_gradients(sum.data(), both, 2, 0, size); };
  const auto step_seconds = time_per_call(repeats, calls_for(seconds, sync_step, 3), sync_step);
  const auto async_seconds = time_per_call(repeats, calls_for(seconds, async_step, 3), async_step);
  const auto sum_seconds = time_per_call(repeats, calls_for(seconds, add_gradients, 3), add_gradients);
  const auto snapshot_seconds = time_per_call(repeats, calls_for(seconds, snapshot, 3), snapshot);
  report.add({"server.step_us", section, "sync server step: sum 2 + Adam, in place", scaled(step_seconds, 1e6), "µs",
              "no actors"});
  report.add({"server.sum_us", section, "  sum of 2 gradients with clip norms", scaled(sum_seconds, 1e6), "µs",
              "1 thread"});
  report.add({"server.async_step_us", section, "async server step: Adam into a free buffer + snapshot",
              scaled(async_seconds, 1e6), "µs", "1 thread"});
  report.add({"server.snapshot_us", section, "  snapshot (share the buffer + hash)", scaled(snapshot_seconds, 1e6),
              "µs", ""});
  report.add({"server.compute_gradients_us", section, "one worker's compute_gradients (batch 128)",
              scaled(context.baselines.compute_gradients_seconds, 1e6), "µs", "from section 2"});
  report.add({"server.fraction_of_gradient", section, "  sync server step ÷ compute_gradients",
              ratio(step_seconds, context.baselines.compute_gradients_seconds), "ratio", ""});
  report.add({"server.async_fraction_of_gradient", section, "  async server step ÷ compute_gradients",
              ratio(async_seconds, context.baselines.compute_gradients_seconds), "ratio", ""});

  // The sync step as a local run takes it while its other scheduler thread is idle and polling: that
  // thread takes half of each pass (runtime/idle_help.hpp). Here a thread that does nothing else polls.
  {
    IdleHelp help;
    std::atomic<bool> stop{false};
    std::thread helper([&] {
      while (!stop.load(std::memory_order_relaxed))
        if (!help.help()) spin_pause();
    });
    store.split_steps_with(&help);
    const auto split_seconds = time_per_call(repeats, calls_for(seconds, sync_step, 3), sync_step);
    store.split_steps_with(nullptr);
    stop.store(true);
    helper.join();
    report.add({"server.split_step_us", section, "sync server step, half on an idle polling thread",
                scaled(split_seconds, 1e6), "µs", "local runs, when the other thread is idle"});
    report.add({"server.split_fraction_of_gradient", section, "  split sync step ÷ compute_gradients",
                ratio(split_seconds, context.baselines.compute_gradients_seconds), "ratio", ""});
  }

  // One gradient's step through the (async) actor: request/response, message dispatch and the reply's
  // Weights.
  ActorConfig config(0);
  caf::actor_system system{config};
  auto async_job = context.job;
  async_job.cluster.mode = TrainingMode::async;
  auto state = initial_server_state(async_job, train->width, train->num_classes);
  if (!state) throw std::runtime_error(state.error());
  auto server = spawn_parameter_server(system, std::move(state).value());
  caf::scoped_actor self{system};
  Weights latest;
  auto actor_step = [&] {
    self->request(server, caf::infinite, apply_atom::value, gradients[0])
        .receive([&](Weights& weights) { latest = std::move(weights); },
                 [&](caf::error&) { throw std::runtime_error("parameter server refused the gradients"); });
  };
  const auto actor_seconds = time_per_call(repeats, calls_for(seconds, actor_step, 3), actor_step);
  caf::anon_send_exit(server, caf::exit_reason::user_shutdown);
  report.add({"server.actor_step_us", section, "ParameterServer actor round trip, 1 gradient",
              scaled(actor_seconds, 1e6), "µs", "request + reply"});
  report.add({"server.actor_fraction_of_gradient", section, "  round trip ÷ compute_gradients",
              ratio(actor_seconds, context.baselines.compute_gradients_seconds), "ratio", ""});

  // Sharded servers (cluster.servers = K): one async push is a request to every shard at once with its
  // part of the gradient (cut as a worker cuts it, with the sums of squares a shard's clip norms need);
  // each shard steps only its floats and answers with its slice.
  for (std::size_t shards : {1, 2, 3, 4}) {
    auto job = async_job;
    job.cluster.servers = shards;
    auto whole = initial_server_state(job, train->width, train->num_classes);
    if (!whole) throw std::runtime_error(whole.error());
    auto servers = spawn_parameter_servers(system, job, std::move(whole).value());
    if (!servers) throw std::runtime_error(servers.error());
    std::vector<ShardPlan> plans;
    for (const auto& shard : *servers)
      self->request(shard, caf::infinite, plan_atom::value)
          .receive([&](ShardPlan& plan) { plans.push_back(std::move(plan)); },
                   [&](caf::error&) { throw std::runtime_error("a shard did not say what it holds"); });
    auto slicer = GradientSlicer::make(std::move(plans));
    if (!slicer) throw std::runtime_error(slicer.error());
    std::size_t largest_slice = 0;
    auto sharded_step = [&] {
      auto parts = slicer->slice(gradients[0]);
      if (!parts) throw std::runtime_error(parts.error());
      for (std::size_t i = 0; i < servers->size(); ++i) self->send((*servers)[i], apply_atom::value, (*parts)[i]);
      for (std::size_t i = 0; i < servers->size(); ++i)
        self->receive([&](Weights& slice) { largest_slice = std::max(largest_slice, slice.values.size()); },
                      [&](caf::error&) { throw std::runtime_error("a shard refused the gradients"); });
    };
    const auto shard_seconds = time_per_call(repeats, calls_for(seconds, sharded_step, 3), sharded_step);
    for (auto& shard : *servers) caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
    const auto key = "server.shards" + std::to_string(shards);
    report.add({key + ".step_us", section, std::to_string(shards) + " server shard(s): step round trip",
                scaled(shard_seconds, 1e6), "µs", "all shards in parallel"});
    report.add({key + ".largest_slice_mb", section, "  largest shard's weights per step",
                exact(static_cast<double>(largest_slice) * 4.0 / 1e6), "MB", "cut inside arrays on the 8,192-float grid"});
  }
}

}  // namespace psgrad::bench
