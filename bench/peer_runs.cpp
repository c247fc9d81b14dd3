// The section runs on Fashion-MNIST when it is installed, for throughput and time to accuracy alike,
// so that every figure of the peer table is of the same data; else on section 3's digits, without the
// time to accuracy.
#include "bench/peer_runs.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "bench/machine_load.hpp"
#include "bench/peer_section.hpp"

namespace psgrad::bench {

namespace {

constexpr const char* kSection = "8 peers";

void record_single_process_skipped(Report& report, const std::string& note) {
  // Empty rows, as an unmeasured ratio is: the keys stay in the JSON and the table shows "—".
  report.add({"peer.torch.samples_per_second", kSection, "PyTorch, one process, best thread count: samples/s",
              Stats{}, "samples/s", note});
  report.add({"peer.torch.ratio", kSection, "  psgrad async 2 workers in one process ÷ it", Stats{}, "ratio", note});
}

// One PyTorch process on 1 and then 2 threads (torch_mlp.py), against psgrad's local async run.
void measure_single_process_peer(BenchContext& context, Report& report, const PeerData& data,
                                 const Stats& psgrad_async, bool reference_blas) {
  const auto& effort = context.effort;
  auto& details = report.details("peer")["torch"];
  const std::vector<std::string> arguments = {
      "--data", data.folder, "--threads", "1,2", "--seconds", fmt::format("{}", effort.seconds_per_sample),
      "--warmup-seconds", context.options.quick ? "0.05" : "0.5", "--repeats", std::to_string(effort.repeats),
      "--batch-size", std::to_string(context.job.training.batch_size)};
  wait_for_quiet_machine(effort.quiet_wait_seconds);
  const auto run = run_peer_script(context, "torch_mlp.py", arguments, std::chrono::seconds(context.options.quick ? 60 : 300));
  if (run.skipped) throw std::runtime_error("torch_mlp.py: " + run.reason);
  details["status"] = "measured";
  details["result"] = run.result;
  const auto& runs = run.result.at("runs");
  const auto note = fmt::format("{} x {} s, {}", effort.repeats, effort.seconds_per_sample, torch_note(run.result));
  for (const auto& [threads, rates] : runs.items())
    report.add({fmt::format("peer.torch.t{}.samples_per_second", threads), kSection,
                fmt::format("PyTorch, one process, {} thread{}: samples/s", threads, threads == "1" ? "" : "s"),
                summarize(rates.get<std::vector<double>>()), "samples/s", note});
  const int best_threads = run.result.at("best_threads").get<int>();
  const auto best = summarize(runs.at(std::to_string(best_threads)).get<std::vector<double>>());
  report.add({"peer.torch.samples_per_second", kSection, "PyTorch, one process, best thread count: samples/s", best,
              "samples/s",
              fmt::format("{} thread{}; other processes: {:.2f} cores", best_threads, best_threads == 1 ? "" : "s",
                          run.other_cores)});
  report.add({"peer.torch.ratio", kSection, "  psgrad async 2 workers in one process ÷ it",
              reference_blas ? Stats{} : ratio(psgrad_async, best), "ratio",
              reference_blas ? "no ratio: torch runs on the reference BLAS"
                             : fmt::format("psgrad {:.0f} samples/s, this section", psgrad_async.median)});
}

PeerData peer_data(const BenchContext& context) {
  if (auto fashion = resolve_data_folder("fashion-mnist", context.options.data_dir)) {
    auto split = load_data_shared("fashion-mnist", "", context.options.data_dir);
    if (!split) throw std::runtime_error(split.error());
    return {"fashion-mnist", *fashion, *split};
  }
  const auto digits = resolve_data_folder("mnist", context.options.data_dir);
  if (!digits) throw std::runtime_error(digits.error());
  return {"mnist", *digits, context.data};
}

}  // namespace

void measure_peer_runs(BenchContext& context, Report& report) {
  auto& details = report.details("peer");
  details["python"] = context.options.python_path;
  // peer_common.py run as a script imports torch and names the BLAS it computes with.
  const auto probe = run_peer_script(context, "peer_common.py", {}, std::chrono::seconds(120));
  if (probe.skipped) {
    fmt::print(stderr, "psgrad_bench: 8 PyTorch peers: {} ({})\n", kTorchSkipped, probe.reason);
    details["status"] = kTorchSkipped;
    details["reason"] = probe.reason;
    details["torch"]["status"] = kTorchSkipped;  // where earlier runs' JSON had it
    record_parallel_peers_skipped(report, kTorchSkipped);
    record_single_process_skipped(report, kTorchSkipped);
    return;
  }
  details["status"] = "measured";
  details["probe"] = probe.result;
  const bool reference_blas = on_reference_blas(probe.result);
  if (reference_blas)
    fmt::print(stderr, "psgrad_bench: 8 PyTorch peers: torch computes with the reference BLAS ({}); no ratios "
                       "(scripts/setup.sh --peers installs OpenBLAS)\n", probe.result.value("blas", "?"));
  const auto data = peer_data(context);
  details["data"] = data.split.description;
  const auto psgrad_async = measure_parallel_peers(context, report, data, reference_blas);
  measure_peer_accuracy(context, report, data);
  measure_single_process_peer(context, report, data, psgrad_async, reference_blas);
}

}  // namespace psgrad::bench
