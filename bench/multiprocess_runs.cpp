// The rate comes from psgrad's own summary line (samples / training seconds, as the local runs
// compute it), so process start-up, data loading and joining are not part of it.
#include "bench/multiprocess_runs.hpp"

#include <regex>
#include <stdexcept>

#include <utility>

#include <fmt/format.h>

#include "bench/captured_run.hpp"
#include "bench/local_runs.hpp"
#include "bench/machine_load.hpp"
#include "bench/payload_cost.hpp"

namespace psgrad::bench {

double parse_samples_per_second(const std::string& output) {
  static const std::regex summary_rate(R"(summary:.*?([0-9]+(?:\.[0-9]+)?) samples/s)");
  std::smatch match;
  if (!std::regex_search(output, match, summary_rate)) return -1.0;
  return std::stod(match[1].str());
}

namespace {

constexpr std::size_t kWorkers = 2;

void record_memory(const ChildRun& run, ProcessTreeMemory& memory) {
  memory.measured = true;
  memory.tree_max_rss_kb = run.tree_max_rss_kb;
  memory.server_vm_hwm_kb = 0;
  memory.worker_vm_hwm_kb = 0;
  memory.workers_seen = 0;
  for (const auto& peak : run.peaks) {
    if (!peak.is_descendant) {
      memory.server_vm_hwm_kb = peak.vm_hwm_kb;
    } else {
      memory.worker_vm_hwm_kb = std::max(memory.worker_vm_hwm_kb, peak.vm_hwm_kb);
      ++memory.workers_seen;
    }
  }
}

}  // namespace

ProcessesRun run_psgrad_processes(const BenchContext& context, TrainingMode mode, bool pipeline,
                                  std::uint64_t iterations, const std::string& data_name) {
  const auto name = mode_name(mode);
  std::vector<std::string> argv = {
      context.options.psgrad_path, "train", "--config", context.options.config_path, "--processes",
      "--mode", name, "--workers", std::to_string(kWorkers), "--data-dir", context.options.data_dir,
      "--set", fmt::format("data.name=\"{}\"", data_name), "--set", "evaluation.frequency=100000",
      "--set", fmt::format("training.iterations={}", iterations)};
  // Async also with cluster.pipeline (two pushes out per worker), which hides the network round trip.
  if (pipeline) argv.insert(argv.end(), {"--set", "cluster.pipeline=true"});
  ProcessesRun result{0.0, run_captured(argv, std::chrono::seconds(300))};
  const auto& run = result.run;
  result.samples_per_second = parse_samples_per_second(run.output);
  if (run.exit_code != 0 || result.samples_per_second < 0.0 || run.leftover_processes > 0)
    throw std::runtime_error(fmt::format(
        "`{} train --processes --mode {}` failed (exit {}, signal {}{}, {} worker process(es) left running):\n{}",
        context.options.psgrad_path, name, run.exit_code, run.signal, run.timed_out ? ", timed out" : "",
        run.leftover_processes, run.output));
  return result;
}

void measure_multiprocess_runs(BenchContext& context, Report& report) {
  const auto iterations = iterations_for(context, kWorkers);
  const char* section = "4 processes";
  for (const auto& [mode, pipeline] : {std::pair{TrainingMode::sync, false}, std::pair{TrainingMode::async, false},
                                       std::pair{TrainingMode::async, true}}) {
    const auto name = mode_name(mode);
    const auto label = pipeline ? fmt::format("{} pipelined", name) : std::string(name);
    std::vector<double> rates, local_rates, busy_cores, other_cores;
    for (std::size_t r = 0; r < context.effort.repeats; ++r) {
      // The local run it is divided by, right before it (see measure_local_runs).
      wait_for_quiet_machine(context.effort.quiet_wait_seconds);
      const auto local_run = timed_local_run(context, mode, kWorkers);
      local_rates.push_back(static_cast<double>(local_run.samples) / local_run.training_seconds);
      wait_for_quiet_machine(context.effort.quiet_wait_seconds);
      const CpuMeter meter;  // own: the psgrad processes too, once reaped
      const auto processes = run_psgrad_processes(context, mode, pipeline, iterations);
      busy_cores.push_back(meter.own_cores());
      other_cores.push_back(meter.other_cores());
      rates.push_back(processes.samples_per_second);
      record_memory(processes.run, context.process_memory);
    }
    const auto rate = summarize(rates);
    const auto local = summarize(local_rates);
    const auto key = fmt::format("processes.{}{}.w{}", name, pipeline ? "_pipeline" : "", kWorkers);
    report.add({key + ".samples_per_second", section, fmt::format("{} {} worker processes: samples/s", label, kWorkers),
                rate, "samples/s", fmt::format("{} iterations x {}", iterations, context.effort.repeats)});
    report.add({key + ".busy_cores", section, "  cores busy (server + workers, whole run)", summarize(busy_cores),
                "cores", fmt::format("other processes: {:.2f} cores", summarize(other_cores).median)});
    report.add({key + ".local_samples_per_second", section,
                fmt::format("  local {} {} workers, each run right before", name, kWorkers), local, "samples/s",
                "in this process"});
    report.add({key + ".ratio_to_local", section, fmt::format("  ÷ local {} {} workers (the run before)", name, kWorkers),
                paired_ratio(rate, local), "ratio", ""});
    // What crosses loopback per second at this rate: each gradient goes up, fresh weights come back.
    const double payload_bytes = static_cast<double>(context.parameter_count) * 4.0 * 2.0;
    const auto gradients_per_second = scaled(rate, 1.0 / static_cast<double>(context.job.training.batch_size));
    report.add({key + ".loopback_mb_per_second", section, "  payload traffic at that rate",
                scaled(gradients_per_second, payload_bytes * 1e-6), "MB/s", "weights + gradients"});
  }
  const double step_bytes = static_cast<double>(context.parameter_count) * 4.0 * 2.0 * kWorkers;
  report.add({"processes.bytes_per_sync_step", section,
              fmt::format("bytes per sync step ({} params x 4 B x 2 x {})", context.parameter_count, kWorkers),
              exact(step_bytes * 1e-6), "MB", "async: half per step"});
  measure_payload_cost(context, report);
}

}  // namespace psgrad::bench
