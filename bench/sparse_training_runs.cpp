// Each repeat runs every mode and shard count once, one after another, as section 3 alternates its
// runs, so that load drifting over the section reaches every series alike. Iterations are sized from a
// short first run so that each run trains for about effort.seconds_per_run. The run across processes is
// divided by the same job as `psgrad train` in one process, run right before it, as section 4 pairs its runs.
#include "bench/sparse_training_runs.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <stdexcept>

#include <sys/resource.h>

#include <fmt/format.h>

#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "actors/local_training.hpp"
#include "bench/machine_load.hpp"
#include "bench/peer_scripts.hpp"
#include "bench/sparse_data.hpp"
#include "bench/sparse_loopback_run.hpp"
#include "caf/actor_system.hpp"

namespace psgrad::bench {

namespace {

constexpr const char* kSection = "9 sparse";
constexpr std::size_t kWidth = 32;
constexpr std::uint64_t kTableRows = std::uint64_t{1} << 16;
constexpr std::size_t kShardCounts[] = {1, 2, 4};
constexpr std::uint64_t kTrainRowSeed = 10;
constexpr std::uint64_t kDevRowSeed = 11;

struct ClickSplit {
  std::shared_ptr<const SparseDataset> train, dev;
};

// samples / training_seconds of one run; throws when the run fails.
double run_rate(TrainingJob job, const ClickSplit& data) {
  ActorConfig config(0);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  auto summary = train_in_process(system, job, run_on_columns(data.train, data.dev));
  if (!summary) throw std::runtime_error("sparse local run failed: " + summary.error());
  return static_cast<double>(summary->run.samples) / summary->run.training_seconds;
}

std::string series_key(std::size_t shards, TrainingMode mode) {
  return fmt::format("sparse.samples_per_s.local_{}_shards.{}", shards, mode_name(mode));
}

struct LocalRates {
  Stats best_async;  // psgrad async's best shard count's rates, for the ratio to PyTorch
  std::uint64_t iterations = 0;
};

// Every local series.
LocalRates measure_local(const SparseEffort& effort, const ClickSplit& data, Report& report) {
  auto job = click_job(kWidth, kTableRows);
  job.cluster.mode = TrainingMode::sync;
  job.training.iterations = 20;
  const double probe_rate = run_rate(job, data);
  const double per_iteration = static_cast<double>(job.training.batch_size * job.cluster.num_workers);
  const auto iterations =
      std::max<std::uint64_t>(10, static_cast<std::uint64_t>(std::ceil(effort.seconds_per_run * probe_rate / per_iteration)));
  std::map<std::string, std::vector<double>> rates, other_cores;
  for (std::size_t r = 0; r < effort.repeats; ++r) {
    // Once a repeat, not before every run: six runs each waiting would outlast the section's minute.
    wait_for_quiet_machine(effort.quiet_wait_seconds);
    for (const auto mode : {TrainingMode::sync, TrainingMode::async})
      for (const auto shards : kShardCounts) {
        job.cluster.mode = mode;
        job.cluster.servers = shards;
        job.training.iterations = iterations;
        const CpuMeter meter;
        rates[series_key(shards, mode)].push_back(run_rate(job, data));
        other_cores[series_key(shards, mode)].push_back(meter.other_cores());
      }
  }
  Stats best_async;
  for (const auto mode : {TrainingMode::sync, TrainingMode::async})
    for (const auto shards : kShardCounts) {
      const auto key = series_key(shards, mode);
      const auto stats = summarize(rates[key]);
      const auto& others = other_cores[key];
      report.add({key, kSection, fmt::format("{} 2 workers, {} table shard{}: samples/s", mode_name(mode), shards,
                                             shards == 1 ? "" : "s"),
                  stats, "samples/s",
                  fmt::format("{} iterations; other processes {:.2f} cores", iterations,
                              *std::max_element(others.begin(), others.end()))});
      if (mode == TrainingMode::async && stats.median > best_async.median) best_async = stats;
    }
  return {best_async, iterations};
}

// Minor page faults this process has taken so far.
long page_faults_so_far() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

// `psgrad train --processes`, async with one table shard, each run right after `psgrad train` of the same
// config in one process: fresh processes of the same binary on the same files both ways, so the ratio is
// what crossing processes costs. The same job trained inside this bench process is reported beside it, with
// no target: this process has trained a dozen times before it, so its heap's pages are made, where a fresh
// process faults in its working memory during its first second (the details count this process's faults).
void measure_loopback(const BenchContext& context, const SparseEffort& effort, const ClickSplit& data,
                      std::uint64_t iterations, Report& report) {
  auto job = click_job(kWidth, kTableRows);
  job.cluster.mode = TrainingMode::async;
  job.cluster.servers = 1;
  job.training.iterations = iterations;
  const SparseLoopbackRun loopback(context.options.psgrad_path, job, {effort.click_train_rows, kTrainRowSeed},
                                   {effort.click_dev_rows, kDevRowSeed});
  std::vector<double> rates, command_rates, in_bench_rates, other_cores;
  std::vector<long> in_bench_faults;
  for (std::size_t r = 0; r < effort.loopback_repeats; ++r) {
    wait_for_quiet_machine(effort.quiet_wait_seconds);
    const long faults_before = page_faults_so_far();
    in_bench_rates.push_back(run_rate(job, data));
    in_bench_faults.push_back(page_faults_so_far() - faults_before);
    command_rates.push_back(loopback.run(iterations, false));
    const CpuMeter meter;
    rates.push_back(loopback.run(iterations));
    other_cores.push_back(meter.other_cores());
  }
  const auto rate = summarize(rates);
  const auto command = summarize(command_rates);
  const auto in_bench = summarize(in_bench_rates);
  const auto note = fmt::format("{} iterations; other processes {:.2f} cores", iterations,
                                *std::max_element(other_cores.begin(), other_cores.end()));
  report.add({"sparse.samples_per_s.local_command", kSection,
              "async in one process (`psgrad train`, 1 table shard, 2 workers): samples/s", command, "samples/s", note});
  report.add({"sparse.samples_per_s.loopback_3_processes", kSection,
              "async across processes (server, 1 table shard, 2 workers), loopback: samples/s", rate, "samples/s",
              note});
  report.add({"sparse.loopback_vs_local", kSection, "  ÷ `psgrad train` in one process, run right before",
              paired_ratio(rate, command), "ratio", "target >= 0.7"});
  report.add({"sparse.loopback_vs_bench_process", kSection, "  ÷ the same job trained in this bench process",
              paired_ratio(rate, in_bench), "ratio", "no target: this process's memory is warm"});
  report.details("sparse")["samples_per_s"]["loopback_3_processes"] = {
      {"processes", "psgrad train --processes: the server, 1 psgrad shard --tables, 2 psgrad work"},
      {"iterations", iterations},
      {"loopback", rates},
      {"local_command", command_rates},
      {"in_bench_process", in_bench_rates},
      {"in_bench_process_page_faults", in_bench_faults}};
}

// The click model's keys for sparse_torch.py, which times its training on 1 and then 2 threads.
void measure_torch(const BenchContext& context, const SparseEffort& effort, const ClickSplit& data,
                   const Stats& psgrad_async, Report& report) {
  const auto job = click_job(kWidth, kTableRows);
  const auto model = SparseModel::build(job.model.architecture, job.model.settings, data.train->num_classes()).value();
  ScratchFolder folder;
  auto description = peer_model(job, model);
  description["train"] = write_peer_keys(folder.path(), "train", model, *data.train);
  const auto keys_path = folder.path() + "/keys.json";
  std::ofstream(keys_path) << description.dump() << "\n";
  wait_for_quiet_machine(effort.quiet_wait_seconds);
  const auto run = run_peer_script(
      context, "sparse_torch.py",
      {"--keys", keys_path, "--threads", "1,2", "--seconds", fmt::format("{}", effort.seconds_per_run),
       "--warmup-seconds", context.options.quick ? "0.05" : "0.5", "--repeats", std::to_string(effort.repeats)},
      std::chrono::seconds(context.options.quick ? 120 : 300));
  const std::string best_name = "PyTorch EmbeddingBag + MLP, best of 1 and 2 threads: samples/s";
  const std::string ratio_name = "  psgrad async (best shard count) ÷ it";
  if (run.skipped) {
    report.details("sparse")["torch"] = {{"status", kTorchSkipped}, {"reason", run.reason}};
    report.add({"sparse.torch_samples_per_s", kSection, best_name, Stats{}, "samples/s", kTorchSkipped});
    report.add({"sparse.psgrad_async_vs_torch", kSection, ratio_name, Stats{}, "ratio", kTorchSkipped});
    return;
  }
  report.details("sparse")["torch"] = run.result;
  const auto& runs = run.result.at("runs");
  const auto note = torch_note(run.result);
  for (const auto& [threads, samples] : runs.items())
    report.add({fmt::format("sparse.torch_samples_per_s.t{}", threads), kSection,
                fmt::format("PyTorch EmbeddingBag + MLP, {} thread{}: samples/s", threads, threads == "1" ? "" : "s"),
                summarize(samples.get<std::vector<double>>()), "samples/s", note});
  const auto best_threads = std::to_string(run.result.at("best_threads").get<int>());
  const auto best = summarize(runs.at(best_threads).get<std::vector<double>>());
  report.add({"sparse.torch_samples_per_s", kSection, best_name, best, "samples/s",
              fmt::format("{} thread(s); other processes {:.2f} cores", best_threads, run.other_cores)});
  const bool reference_blas = on_reference_blas(run.result);
  report.add({"sparse.psgrad_async_vs_torch", kSection, ratio_name, reference_blas ? Stats{} : ratio(psgrad_async, best),
              "ratio", reference_blas ? "no ratio: torch runs on the reference BLAS" : "target >= 2"});
}

}  // namespace

void measure_sparse_training_runs(const BenchContext& context, const SparseEffort& effort, Report& report) {
  const ClickSplit data{click_dataset(effort.click_train_rows, kTrainRowSeed),
                        click_dataset(effort.click_dev_rows, kDevRowSeed)};
  const auto local = measure_local(effort, data, report);
  measure_loopback(context, effort, data, local.iterations, report);
  measure_torch(context, effort, data, local.best_async, report);
}

}  // namespace psgrad::bench
