// Each repeat runs psgrad with 1 worker, psgrad with 2 workers and the Thinc peer one after another, so
// that load drifting over the section reaches every series alike. psgrad trains sync in this process
// (server, table shard and workers as actors), batch 128 per worker, for about seconds_per_run; the peer
// trains the same config with Thinc's NumpyOps on one thread, batch 128, for as long.
#include "bench/thinc_section.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "actors/local_training.hpp"
#include "bench/captured_run.hpp"
#include "bench/machine_load.hpp"
#include "bench/peer_scripts.hpp"
#include "bench/sparse_data.hpp"
#include "caf/actor_system.hpp"
#include "io/config.hpp"
#include "io/sparse_examples.hpp"

namespace psgrad::bench {

namespace {

constexpr const char* kSection = "10 thinc";
constexpr const char* kConfig = "/configs/debian-packages-textcnn.cfg";

struct ThincEffort {
  std::size_t repeats = 3;
  double seconds_per_run = 2.0;
  std::size_t packages = 0;  // 0: every package
};

Result<std::shared_ptr<const SparseDataset>> summaries(const BenchContext& context, const std::string& folder) {
  const auto path = folder + "/packages.jsonl";
  const auto run =
      run_captured({context.options.psgrad_path, "data", "debian-packages", "--out", path}, std::chrono::seconds(120));
  if (!run.started || run.exit_code != 0)
    return Error{fmt::format("psgrad data debian-packages failed: {}", run.output.substr(0, run.output.find('\n')))};
  SparseLayout layout;
  layout.columns = {{"summary", ColumnKind::text, std::nullopt}};
  layout.label = "section";
  auto data = read_sparse_examples(path, layout);
  if (!data) return Error{data.error()};
  return std::make_shared<const SparseDataset>(std::move(*data));
}

// samples / training_seconds of one sync run in this process.
double psgrad_rate(TrainingJob job, const std::shared_ptr<const SparseDataset>& train,
                   const std::shared_ptr<const SparseDataset>& dev) {
  ActorConfig config(0);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  auto summary = train_in_process(system, job, run_on_columns(train, dev));
  if (!summary) throw std::runtime_error("psgrad run of the text classifier failed: " + summary.error());
  return static_cast<double>(summary->run.samples) / summary->run.training_seconds;
}

// The peer's input: the summaries' token ids (uint64) and offsets, and the labels, as raw little-endian files.
void write_examples(const SparseDataset& data, const std::string& folder) {
  const auto& field = data.id_fields.front();
  std::ofstream ids(folder + "/ids.u64", std::ios::binary), offsets(folder + "/offsets.u64", std::ios::binary),
      labels(folder + "/labels.u64", std::ios::binary);
  ids.write(reinterpret_cast<const char*>(field.ids.data()), static_cast<std::streamsize>(field.ids.size() * 8));
  for (const auto offset : field.offsets) {
    const std::uint64_t value = offset;
    offsets.write(reinterpret_cast<const char*>(&value), 8);
  }
  for (const auto label : data.labels) {
    const std::uint64_t value = label;
    labels.write(reinterpret_cast<const char*>(&value), 8);
  }
  if (!ids || !offsets || !labels) throw std::runtime_error("cannot write the Thinc peer's examples into " + folder);
}

}  // namespace

void measure_thinc_section(const BenchContext& context, Report& report) {
  ThincEffort effort;
  if (context.options.quick) effort = {1, 0.3, 3000};
  ScratchFolder folder;
  auto all = summaries(context, folder.path());
  if (!all) {
    const Stats none;
    report.add({"thinc.textcnn.psgrad_1_worker", kSection, "text classifier, psgrad 1 worker: samples/s", none,
                "samples/s", "not measured: " + all.error()});
    return;
  }
  const auto data = effort.packages ? first_examples(*all, effort.packages) : *all;
  const auto [train, dev] = split_last_of_each_class(*data, 0.2);
  auto config = load_config(context.options.source_dir + kConfig);
  if (!config) throw std::runtime_error(config.error());
  TrainingJob job = *config;
  job.cluster.mode = TrainingMode::sync;
  job.cluster.servers = 1;
  job.evaluation.frequency = 0;
  // Iterations for about seconds_per_run, from a short first run.
  job.cluster.num_workers = 1;
  job.training.iterations = 20;
  const double probe = psgrad_rate(job, train, dev);
  const auto iterations = std::max<std::uint64_t>(
      20, static_cast<std::uint64_t>(std::ceil(effort.seconds_per_run * probe / static_cast<double>(job.training.batch_size))));
  write_examples(*train, folder.path());
  std::vector<double> one, two, thinc;
  std::string peer_note;
  for (std::size_t r = 0; r < effort.repeats; ++r) {
    wait_for_quiet_machine(context.effort.quiet_wait_seconds);
    job.training.iterations = iterations;
    job.cluster.num_workers = 1;
    one.push_back(psgrad_rate(job, train, dev));
    job.cluster.num_workers = 2;
    two.push_back(psgrad_rate(job, train, dev));
    const auto peer = run_peer_script(context, "thinc_textcnn.py",
                                      {"--config", context.options.source_dir + kConfig, "--examples", folder.path(),
                                       "--seconds", fmt::format("{}", effort.seconds_per_run)},
                                      std::chrono::seconds(600));
    if (peer.skipped) {
      peer_note = "not measured: " + peer.reason;
      continue;
    }
    thinc.push_back(peer.result.at("samples_per_second").get<double>());
    peer_note = fmt::format("Thinc {} on NumpyOps, 1 thread, {} steps", peer.result.value("thinc", "?"),
                            peer.result.value("steps", 0));
  }
  const auto note = fmt::format("{} summaries, {} iterations a run, sync, 1 table shard", train->count, iterations);
  const auto psgrad_one = summarize(one);
  const auto psgrad_two = summarize(two);
  report.add({"thinc.textcnn.psgrad_1_worker", kSection, "text classifier (Thinc config), psgrad 1 worker: samples/s",
              psgrad_one, "samples/s", note});
  report.add({"thinc.textcnn.psgrad_2_workers", kSection, "  psgrad 2 workers: samples/s", psgrad_two, "samples/s", note});
  report.add({"thinc.textcnn.2_vs_1_workers", kSection, "  psgrad 2 workers / 1 worker", paired_ratio(psgrad_two, psgrad_one),
              "x", "goal at least 1.7"});
  if (thinc.empty()) {
    const Stats none;
    report.add({"thinc.textcnn.thinc", kSection, "  real Thinc, the same config and batches: samples/s", none,
                "samples/s", peer_note});
    return;
  }
  const auto thinc_stats = summarize(thinc);
  report.add({"thinc.textcnn.thinc", kSection, "  real Thinc, the same config and batches: samples/s", thinc_stats,
              "samples/s", peer_note});
  report.add({"thinc.textcnn.psgrad_vs_thinc", kSection, "  psgrad 1 worker / Thinc", paired_ratio(psgrad_one, thinc_stats),
              "x", "goal at least 5"});
}

}  // namespace psgrad::bench
