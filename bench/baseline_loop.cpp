// The loop a single process without a parameter server would run; Adam updates the model's own
// weights in place, so nothing is copied between steps.
#include "bench/baseline_loop.hpp"

#include <thread>

#include <fmt/format.h>

#include "bench/machine_load.hpp"
#include "model/minibatcher.hpp"

namespace psgrad::bench {

namespace {

// One thread's loop as above, on its own model, optimizer and data stream.
struct PlainLoop {
  PlainLoop(const BenchContext& context, std::size_t index)
      : model(build_initialized_model(context.job, context.data.train->width, context.data.train->num_classes).value()),
        optimizer(std::move(build_optimizer(context.job, model.layout()).value())),
        batches(context.data.train, context.job.training.batch_size, worker_data_seed(context.job.training.seed, index)),
        dropout(worker_dropout_seed(context.job.training.seed, index)) {
    model.reserve(context.job.training.batch_size);
  }
  void run(std::size_t steps) {
    for (std::size_t i = 0; i < steps; ++i) {
      const auto batch = batches.next();
      model.compute_gradients(batch.inputs, batch.targets, dropout);
      optimizer->apply_gradients(model.weights_data(), model.gradients().data());
      samples += batch.size;
    }
  }
  Model model;
  std::unique_ptr<Optimizer> optimizer;
  Minibatcher batches;
  Random dropout;
  std::uint64_t samples = 0;
};

// Two independent plain loops at once, one per core, sharing nothing but the data set: what this
// machine gives two workers before any parameter server is involved (two cores may share caches,
// memory bandwidth or, on a VM, one physical core). Every speed-up target is read against it.
void measure_two_plain_threads(BenchContext& context, Report& report, std::size_t steps) {
  std::vector<double> rates;
  for (std::size_t r = 0; r < context.effort.repeats; ++r) {
    PlainLoop first(context, 0), second(context, 1);
    first.run(5);
    second.run(5);
    first.samples = second.samples = 0;
    wait_for_quiet_machine(context.effort.quiet_wait_seconds);
    const auto start = Clock::now();
    std::thread other([&] { second.run(steps); });
    first.run(steps);
    other.join();
    rates.push_back(static_cast<double>(first.samples + second.samples) / seconds_since(start));
  }
  const auto rate = summarize(rates);
  context.baselines.two_plain_threads = rate;
  report.add({"baseline.two_threads.samples_per_second", "2 baseline", "2 plain threads at once: samples/s", rate,
              "samples/s", fmt::format("{} steps each x {}", steps, context.effort.repeats)});
  report.add({"baseline.two_threads.speedup", "2 baseline", "  ÷ 1 thread (this machine's ceiling for 2 workers)",
              ratio(rate, context.baselines.baseline_samples_per_second), "ratio", ""});
}

}  // namespace

double plain_loop_samples_per_second(const BenchContext& context, std::size_t steps) {
  PlainLoop loop(context, 0);
  loop.run(5);
  loop.samples = 0;
  const auto start = Clock::now();
  loop.run(steps);
  return static_cast<double>(loop.samples) / seconds_since(start);
}

void measure_baseline(BenchContext& context, Report& report) {
  const auto& job = context.job;
  const auto& train = context.data.train;
  auto model = build_initialized_model(job, train->width, train->num_classes).value();
  auto optimizer = std::move(build_optimizer(job, model.layout()).value());
  Minibatcher batches(train, job.training.batch_size, worker_data_seed(job.training.seed, 0));
  Random dropout(worker_dropout_seed(job.training.seed, 0));
  model.reserve(job.training.batch_size);

  std::uint64_t samples = 0;
  auto step = [&] {
    const auto batch = batches.next();
    model.compute_gradients(batch.inputs, batch.targets, dropout);
    optimizer->apply_gradients(model.weights_data(), model.gradients().data());
    samples += batch.size;
  };
  for (int i = 0; i < 10; ++i) step();  // warm-up: caches, page faults, branch predictors
  const std::size_t steps = calls_for(context.effort.seconds_per_sample, step, context.effort.min_iterations);
  std::vector<double> rates, busy_cores, other_cores;
  for (std::size_t r = 0; r < context.effort.repeats; ++r) {
    wait_for_quiet_machine(context.effort.quiet_wait_seconds);
    samples = 0;
    const CpuMeter meter;
    const auto start = Clock::now();
    for (std::size_t i = 0; i < steps; ++i) step();
    rates.push_back(static_cast<double>(samples) / seconds_since(start));
    busy_cores.push_back(meter.own_cores());
    other_cores.push_back(meter.other_cores());
  }
  const auto rate = summarize(rates);
  context.baselines.baseline_samples_per_second = rate;
  const auto note = fmt::format("{} steps x {}", steps, context.effort.repeats);
  report.add({"baseline.samples_per_second", "2 baseline", "1 thread, no actors: samples/s", rate, "samples/s",
              note});
  // Below 1 means this thread did not get its core for the whole run: the machine was busy.
  report.add({"baseline.busy_cores", "2 baseline", "  cores busy (process CPU ÷ wall)", summarize(busy_cores),
              "cores", fmt::format("other processes: {:.2f} cores", summarize(other_cores).median)});
  const auto achieved = scaled(rate, context.flops_per_sample * 1e-9);
  report.add({"baseline.gflops", "2 baseline", "  achieved FLOP rate", achieved, "GFLOP/s", ""});
  report.add({"baseline.fraction_of_ceiling", "2 baseline", "  ÷ ceiling (1 core)",
              ratio(achieved, context.baselines.ceiling_gflops), "ratio", ""});

  measure_two_plain_threads(context, report, steps);

  // The parts of one step, each on its own, so a profile can be read against them.
  const std::size_t part_repeats = std::max<std::size_t>(context.effort.repeats, context.options.quick ? 1 : 5);
  const double part_seconds = context.effort.seconds_per_sample / 5.0;
  // An epoch's first batch is always full; its own batcher keeps it valid while `batches` moves on.
  Minibatcher fixed_batches(train, job.training.batch_size, worker_data_seed(job.training.seed, 1));
  const auto fixed = fixed_batches.next();
  auto gradient = [&] { model.compute_gradients(fixed.inputs, fixed.targets, dropout); };
  context.baselines.compute_gradients_seconds =
      time_per_call(part_repeats, calls_for(part_seconds, gradient, 3), gradient);
  report.add({"baseline.compute_gradients_ms", "2 baseline", "  Model::compute_gradients (batch 128)",
              scaled(context.baselines.compute_gradients_seconds, 1e3), "ms", "per call"});
  auto adam = [&] { optimizer->apply_gradients(model.weights_data(), model.gradients().data()); };
  report.add({"baseline.adam_ms", "2 baseline", "  Adam::apply_gradients",
              scaled(time_per_call(part_repeats, calls_for(part_seconds, adam, 3), adam), 1e3), "ms",
              "per call"});
  auto next = [&] { batches.next(); };
  report.add({"baseline.minibatch_ms", "2 baseline", "  Minibatcher::next",
              scaled(time_per_call(part_repeats, calls_for(part_seconds, next, 3), next), 1e3), "ms",
              "per call"});
}

}  // namespace psgrad::bench
