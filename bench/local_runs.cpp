// Iteration counts are sized from the baseline so that each run trains for about
// effort.seconds_per_sample whatever the speed-up turns out to be.
#include "bench/local_runs.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "bench/baseline_loop.hpp"
#include "bench/machine_load.hpp"
#include "caf/actor_system.hpp"

namespace psgrad::bench {

Result<TrainingSummary> run_in_process(const TrainingJob& job, const DataSplit& data,
                                       ReportCallback on_report) {
  ActorConfig config(0);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  return train_in_process(system, job, data.train, data.dev, std::move(on_report));
}

std::uint64_t iterations_for(const BenchContext& context, std::size_t workers) {
  const double gradients_per_second =
      context.baselines.baseline_samples_per_second.median / static_cast<double>(context.job.training.batch_size);
  const double gradients = context.effort.seconds_per_sample * gradients_per_second *
                           static_cast<double>(context.cores_used(workers));
  return std::max<std::uint64_t>(context.effort.min_iterations,
                                 static_cast<std::uint64_t>(std::ceil(gradients / static_cast<double>(workers))));
}

namespace {

// The job for one measured run: evaluation only at step 0 and at the end (outside training_seconds).
TrainingJob timing_job(const BenchContext& context, TrainingMode mode, std::size_t workers) {
  TrainingJob job = context.job;
  job.cluster.mode = mode;
  job.cluster.num_workers = workers;
  job.evaluation.frequency = std::uint64_t{1} << 40;
  job.training.iterations = iterations_for(context, workers);
  return job;
}

// One worker count's runs in one mode, a sample per repeat.
struct Series {
  std::size_t workers = 0;
  std::uint64_t iterations = 0;
  std::vector<double> rates, busy_cores, other_cores;
  double staleness = 0.0;
};

}  // namespace

TrainingSummary timed_local_run(const BenchContext& context, TrainingMode mode, std::size_t workers) {
  auto summary = run_in_process(timing_job(context, mode, workers), context.data);
  if (!summary) throw std::runtime_error("local run failed: " + summary.error());
  return std::move(*summary);
}

TrainingSummary timed_local_run(const BenchContext& context, const DataSplit& data, TrainingMode mode,
                                std::size_t workers, std::uint64_t iterations) {
  auto job = timing_job(context, mode, workers);
  job.training.iterations = iterations;
  auto summary = run_in_process(job, data);
  if (!summary) throw std::runtime_error("local run failed: " + summary.error());
  return std::move(*summary);
}

// Each repeat runs the plain loop and then 1, 2 and 4 workers one after another, and every ratio
// divides runs of the same repeat: on a shared machine the load drifts over a section's minute, and
// a ratio of two series taken a minute apart measures that drift as much as psgrad.
void measure_local_runs(BenchContext& context, Report& report) {
  const auto section = "3 local";
  for (auto mode : {TrainingMode::sync, TrainingMode::async}) {
    const auto name = mode_name(mode);
    std::vector<Series> all;
    for (std::size_t workers : {1, 2, 4}) all.push_back(Series{workers, iterations_for(context, workers)});
    std::vector<double> baseline_rates;
    const auto baseline_steps = iterations_for(context, 1);
    for (std::size_t r = 0; r < context.effort.repeats; ++r) {
      wait_for_quiet_machine(context.effort.quiet_wait_seconds);
      baseline_rates.push_back(plain_loop_samples_per_second(context, baseline_steps));
      for (auto& series : all) {
        wait_for_quiet_machine(context.effort.quiet_wait_seconds);
        const CpuMeter meter;
        const auto summary = timed_local_run(context, mode, series.workers);
        series.busy_cores.push_back(meter.own_cores());
        series.other_cores.push_back(meter.other_cores());
        series.rates.push_back(static_cast<double>(summary.samples) / summary.training_seconds);
        series.staleness = summary.staleness_mean;
        auto& details = report.details("local")[fmt::format("local.{}.w{}", name, series.workers)];
        details["gradients_per_worker"].push_back(summary.gradients_per_worker);
        details["staleness_max"].push_back(summary.staleness_max);
        details["other_processes_cores"].push_back(series.other_cores.back());
      }
    }
    const auto baseline = summarize(baseline_rates);
    report.add({fmt::format("local.{}.baseline_samples_per_second", name), section,
                fmt::format("{}: 1 thread, no actors, before each repeat: samples/s", name), baseline, "samples/s",
                fmt::format("{} steps x {}; each run below ÷ the one of its repeat", baseline_steps,
                            context.effort.repeats)});
    Stats two_workers;
    for (const auto& series : all) {
      const auto rate = summarize(series.rates);
      const auto key = fmt::format("local.{}.w{}", name, series.workers);
      auto note = fmt::format("{} iterations x {}", series.iterations, context.effort.repeats);
      if (mode == TrainingMode::async) note += fmt::format(", staleness mean {:.2f}", series.staleness);
      report.add({key + ".samples_per_second", section, fmt::format("{} {} workers: samples/s", name, series.workers),
                  rate, "samples/s", note});
      // Below cores_used means the run did not get (or could not use) the cores it was given: on a
      // shared machine, other work; otherwise, waiting (the serial server step, messaging).
      report.add({key + ".busy_cores", section, "  cores busy (process CPU ÷ wall)", summarize(series.busy_cores),
                  "cores", fmt::format("other processes: {:.2f} cores", summarize(series.other_cores).median)});
      report.add({key + ".speedup", section, "  ÷ baseline (its repeat's)", paired_ratio(rate, baseline), "ratio",
                  ""});
      const auto cores = context.cores_used(series.workers);
      const auto achieved = scaled(rate, context.flops_per_sample * 1e-9);
      report.add({key + ".fraction_of_ceiling", section, fmt::format("  ÷ (ceiling x {} cores)", cores),
                  ratio(achieved, scaled(context.baselines.ceiling_gflops, static_cast<double>(cores))),
                  "ratio", fmt::format("{:.1f} GFLOP/s", achieved.median)});
      if (series.workers == 2) {
        // What the parameter server keeps of what two independent threads reach on this machine.
        report.add({key + ".fraction_of_two_threads", section, "  ÷ 2 plain threads (section 2)",
                    ratio(rate, context.baselines.two_plain_threads), "ratio", ""});
        (mode == TrainingMode::sync ? context.baselines.local_sync_2_workers
                                    : context.baselines.local_async_2_workers) = rate;
        two_workers = rate;
      }
      // More workers than cores must not cost throughput.
      if (series.workers == 4)
        report.add({fmt::format("local.{}.w4_over_w2", name), section, "  ÷ 2 workers (its repeat's)",
                    paired_ratio(rate, two_workers), "ratio", ""});
    }
  }
}

}  // namespace psgrad::bench
