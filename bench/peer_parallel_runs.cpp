// Every repeat runs, per mode, psgrad in one process, psgrad with --processes and then each of that
// mode's PyTorch peers, one right after another, and each ratio divides runs of the same repeat (as
// section 3 pairs its runs): on a shared machine the load drifts over the section's minutes.
#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "bench/local_runs.hpp"
#include "bench/machine_load.hpp"
#include "bench/multiprocess_runs.hpp"
#include "bench/peer_scripts.hpp"
#include "bench/peer_section.hpp"

namespace psgrad::bench {

namespace {

constexpr std::size_t kWorkers = 2;
constexpr const char* kSection = "8 peers";

struct Series {
  std::vector<double> rates, other_cores;
  std::string note;  // torch version and BLAS, for a peer
};

std::string other_cores_note(const Series& series) {
  return fmt::format("other processes: {:.2f} cores", summarize(series.other_cores).median);
}

// Iterations (per worker, in async) that keep two workers busy for `seconds` at `samples_per_second`.
std::uint64_t iterations_for_rate(const BenchContext& context, double samples_per_second, double seconds) {
  const double batch = static_cast<double>(context.job.training.batch_size);
  const double per_worker = seconds * samples_per_second / batch / static_cast<double>(kWorkers);
  return std::max<std::uint64_t>(context.effort.min_iterations, static_cast<std::uint64_t>(std::ceil(per_worker)));
}

std::string psgrad_key(TrainingMode mode) { return fmt::format("psgrad_{}", mode_name(mode)); }

}  // namespace

std::vector<std::string> parallel_peer_arguments(const ParallelPeer& peer, const BenchContext& context,
                                                 const PeerData& data) {
  std::vector<std::string> arguments = {"--data", data.folder, "--batch-size",
                                        std::to_string(context.job.training.batch_size)};
  if (peer.mode_argument) arguments.insert(arguments.end(), {"--mode", peer.mode_argument});
  return arguments;
}

Stats measure_parallel_peers(BenchContext& context, Report& report, const PeerData& data, bool reference_blas) {
  const auto& effort = context.effort;
  auto& details = report.details("peer");
  // Sized from an untimed sync run, so that the section needs no other section's figures.
  const auto probe = timed_local_run(context, data.split, TrainingMode::sync, kWorkers, effort.min_iterations * 10);
  const auto iterations = iterations_for_rate(
      context, static_cast<double>(probe.samples) / std::max(probe.training_seconds, 1e-6), effort.seconds_per_sample);
  const auto timeout = std::chrono::seconds(context.options.quick ? 120 : 600);
  std::map<std::string, Series> series;
  for (std::size_t r = 0; r < effort.repeats; ++r) {
    for (auto mode : {TrainingMode::sync, TrainingMode::async}) {
      auto& local = series[psgrad_key(mode) + ".local"];
      wait_for_quiet_machine(effort.quiet_wait_seconds);
      const CpuMeter local_meter;
      const auto summary = timed_local_run(context, data.split, mode, kWorkers, iterations);
      local.other_cores.push_back(local_meter.other_cores());
      local.rates.push_back(static_cast<double>(summary.samples) / summary.training_seconds);

      auto& processes = series[psgrad_key(mode) + ".processes"];
      wait_for_quiet_machine(effort.quiet_wait_seconds);
      const CpuMeter processes_meter;
      processes.rates.push_back(run_psgrad_processes(context, mode, false, iterations, data.name).samples_per_second);
      processes.other_cores.push_back(processes_meter.other_cores());

      for (const auto& peer : parallel_peers()) {
        if (peer.psgrad_mode != mode) continue;
        auto arguments = parallel_peer_arguments(peer, context, data);
        arguments.insert(arguments.end(), {"--seconds", fmt::format("{}", effort.seconds_per_sample),
                                           "--warmup-seconds", context.options.quick ? "0.05" : "0.5"});
        wait_for_quiet_machine(effort.quiet_wait_seconds);
        const auto run = run_peer_script(context, peer.script, arguments, timeout);
        if (run.skipped) throw std::runtime_error(fmt::format("{}: {}", peer.script, run.reason));
        auto& measured = series[peer.key];
        for (double rate : run.result.at("rates")) measured.rates.push_back(rate);
        measured.other_cores.push_back(run.other_cores);
        measured.note = torch_note(run.result);
        details[peer.key]["runs"].push_back(run.result);
      }
    }
  }

  for (auto mode : {TrainingMode::sync, TrainingMode::async}) {
    const auto name = mode_name(mode);
    const auto& local = series[psgrad_key(mode) + ".local"];
    const auto& processes = series[psgrad_key(mode) + ".processes"];
    report.add({fmt::format("peer.{}.local.samples_per_second", psgrad_key(mode)), kSection,
                fmt::format("psgrad {}, 2 workers in one process: samples/s", name), summarize(local.rates),
                "samples/s", fmt::format("{} iterations x {}, {}; {}", iterations, effort.repeats, data.name,
                                         other_cores_note(local))});
    report.add({fmt::format("peer.{}.processes.samples_per_second", psgrad_key(mode)), kSection,
                fmt::format("psgrad {}, --processes (server + 2 workers): samples/s", name),
                summarize(processes.rates), "samples/s", other_cores_note(processes)});
    for (const auto& peer : parallel_peers()) {
      if (peer.psgrad_mode != mode) continue;
      const auto& measured = series[peer.key];
      const auto rate = summarize(measured.rates);
      const auto key = fmt::format("peer.{}", peer.key);
      report.add({key + ".samples_per_second", kSection, fmt::format("{}: samples/s", peer.label), rate, "samples/s",
                  fmt::format("{}; {}", measured.note, other_cores_note(measured))});
      const char* no_ratio = "no ratio: torch runs on the reference BLAS (scripts/setup.sh --peers installs OpenBLAS)";
      report.add({key + ".ratio_local", kSection, fmt::format("  psgrad {} in one process ÷ it", name),
                  reference_blas ? Stats{} : paired_ratio(summarize(local.rates), rate), "ratio",
                  reference_blas ? no_ratio : "paired by repeat"});
      report.add({key + ".ratio_processes", kSection, fmt::format("  psgrad {} --processes ÷ it", name),
                  reference_blas ? Stats{} : paired_ratio(summarize(processes.rates), rate), "ratio",
                  reference_blas ? no_ratio : "paired by repeat"});
    }
  }
  return summarize(series[psgrad_key(TrainingMode::async) + ".local"].rates);
}

void record_parallel_peers_skipped(Report& report, const std::string& note) {
  for (const auto& peer : parallel_peers()) {
    const auto key = fmt::format("peer.{}", peer.key);
    report.add({key + ".samples_per_second", kSection, fmt::format("{}: samples/s", peer.label), Stats{}, "samples/s",
                note});
    report.add({key + ".ratio_local", kSection, "  psgrad in one process ÷ it", Stats{}, "ratio", note});
    report.add({key + ".ratio_processes", kSection, "  psgrad --processes ÷ it", Stats{}, "ratio", note});
    report.add({fmt::format("peer.accuracy.{}.seconds_to_085", peer.key), kSection,
                fmt::format("{}: seconds to 0.85 dev accuracy", peer.label), Stats{}, "s", note});
  }
}

}  // namespace psgrad::bench
