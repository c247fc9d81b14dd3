// psgrad's time is progress.wall_seconds of its first evaluation at or above 0.85, as in section 6: its
// evaluator scores snapshots beside the training, on the same cores. A peer evaluates in its training
// loop (DDP: rank 0; the RPC server: in its step) and stops its clock meanwhile.
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "bench/machine_load.hpp"
#include "bench/peer_scripts.hpp"
#include "bench/peer_section.hpp"
#include "bench/time_to_accuracy.hpp"

namespace psgrad::bench {

namespace {

constexpr const char* kSection = "8 peers";
// Fashion-MNIST reaches 0.85 after about 125k samples (2 epochs): 1500 iterations of 2 x 128 leave room.
constexpr std::uint64_t kPsgradIterations = 1500;
constexpr double kPeerMaxSeconds = 120.0;

struct Hits {
  std::string label;
  std::vector<double> seconds, samples;
  std::size_t runs = 0;
  double final_accuracy = 0.0;
  std::string how;  // what an evaluation step is, for the note
};

void add_row(Report& report, const std::string& key, const Hits& hits) {
  const auto row_key = fmt::format("peer.accuracy.{}.seconds_to_085", key);
  const auto name = fmt::format("{}: seconds to {:.2f} dev accuracy", hits.label, kTargetAccuracy);
  if (hits.seconds.empty()) {
    report.add({row_key, kSection, name, Stats{}, "s",
                hits.runs == 0 ? std::string("quick: not run")
                               : fmt::format("NOT REACHED in {} runs (final {:.3f})", hits.runs, hits.final_accuracy)});
    return;
  }
  report.add({row_key, kSection, name, summarize(hits.seconds), "s",
              fmt::format("{:.0f} samples; {} of {} runs reached it; {}", summarize(hits.samples).median,
                          hits.seconds.size(), hits.runs, hits.how)});
}

}  // namespace

void measure_peer_accuracy(BenchContext& context, Report& report, const PeerData& data) {
  if (data.name != "fashion-mnist") {
    const std::string note = "skipped: Fashion-MNIST not installed (apt-get install dataset-fashion-mnist)";
    for (const char* key : {"psgrad_sync", "psgrad_async"})
      report.add({fmt::format("peer.accuracy.{}.seconds_to_085", key), kSection,
                  fmt::format("{}: seconds to 0.85 dev accuracy", key), Stats{}, "s", note});
    for (const auto& peer : parallel_peers())
      report.add({fmt::format("peer.accuracy.{}.seconds_to_085", peer.key), kSection,
                  fmt::format("{}: seconds to 0.85 dev accuracy", peer.label), Stats{}, "s", note});
    return;
  }
  const auto& effort = context.effort;
  const bool quick = context.options.quick;
  auto& details = report.details("peer")["accuracy"];
  std::map<std::string, Hits> all;
  for (auto mode : {TrainingMode::sync, TrainingMode::async})
    all[fmt::format("psgrad_{}", mode_name(mode))] = {
        fmt::format("psgrad {}, 2 workers in one process", mode_name(mode)), {}, {}, 0, 0.0,
        fmt::format("eval every 10 {}, beside training", mode == TrainingMode::sync ? "iterations" : "steps")};
  for (const auto& peer : parallel_peers())
    all[peer.key] = {peer.label, {}, {}, 0, 0.0,
                     fmt::format("eval every 10 {}, clock stopped meanwhile",
                                 peer.psgrad_mode == TrainingMode::sync ? "iterations" : "steps")};
  for (std::size_t r = 0; r < effort.repeats; ++r) {
    for (auto mode : {TrainingMode::sync, TrainingMode::async}) {
      TrainingJob job = context.job;
      job.cluster.mode = mode;
      job.cluster.num_workers = 2;
      job.evaluation.frequency = 10;
      job.training.iterations = quick ? effort.accuracy_iterations : kPsgradIterations;
      wait_for_quiet_machine(effort.quiet_wait_seconds);
      const auto run = run_to_accuracy(job, data.split);
      auto& hits = all[fmt::format("psgrad_{}", mode_name(mode))];
      ++hits.runs;
      hits.final_accuracy = run.final_accuracy;
      details[fmt::format("psgrad_{}", mode_name(mode))].push_back(
          {{"reached", run.hit.has_value()}, {"final_accuracy", run.final_accuracy},
           {"iterations_run", job.training.iterations},
           {"seconds_to_target", run.hit ? nlohmann::json(run.hit->wall_seconds) : nlohmann::json()},
           {"samples_to_target", run.hit ? nlohmann::json(run.hit->samples) : nlohmann::json()}});
      if (!run.hit) continue;
      hits.seconds.push_back(run.hit->wall_seconds);
      hits.samples.push_back(static_cast<double>(run.hit->samples));
    }
    // --quick leaves the peers out here: three more launches of torch would triple the smoke run.
    for (const auto& peer : parallel_peers()) {
      if (quick) continue;
      auto arguments = parallel_peer_arguments(peer, context, data);
      arguments.insert(arguments.end(), {"--target-accuracy", fmt::format("{}", kTargetAccuracy), "--eval-every", "10",
                                         "--max-seconds", fmt::format("{}", kPeerMaxSeconds)});
      wait_for_quiet_machine(effort.quiet_wait_seconds);
      const auto run = run_peer_script(context, peer.script, arguments, std::chrono::seconds(300));
      if (run.skipped) throw std::runtime_error(fmt::format("{}: {}", peer.script, run.reason));
      details[peer.key].push_back(run.result);
      auto& hits = all[peer.key];
      ++hits.runs;
      hits.final_accuracy = run.result.value("final_accuracy", 0.0);
      if (!run.result.value("reached", false)) continue;
      hits.seconds.push_back(run.result.at("seconds_to_target").get<double>());
      hits.samples.push_back(run.result.at("samples_to_target").get<double>());
    }
  }
  for (const char* key : {"psgrad_sync", "psgrad_async"}) add_row(report, key, all[key]);
  for (const auto& peer : parallel_peers()) add_row(report, peer.key, all[peer.key]);
}

}  // namespace psgrad::bench
