// Both sides train for the same number of epochs at batch 128 per worker: psgrad async with 2 workers and
// 2 table shards, PyTorch in one process. The data file is written by the psgrad binary, so what is
// measured is the command users run.
#include "bench/sparse_accuracy.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "actors/local_training.hpp"
#include "bench/captured_run.hpp"
#include "bench/peer_scripts.hpp"
#include "bench/sparse_data.hpp"
#include "caf/actor_system.hpp"
#include "io/sparse_examples.hpp"

namespace psgrad::bench {

namespace {

constexpr const char* kSection = "9 sparse";
constexpr double kDevFraction = 0.2;

struct AccuracyRows {
  Stats psgrad, torch, majority;
  std::string psgrad_note, torch_note, majority_note;
};

void add_rows(Report& report, const AccuracyRows& rows) {
  report.add({"sparse.debian_packages.psgrad_accuracy", kSection, "Debian packages' section: psgrad dev accuracy",
              rows.psgrad, "accuracy", rows.psgrad_note});
  report.add({"sparse.debian_packages.torch_accuracy", kSection, "  PyTorch, the same model, keys and split",
              rows.torch, "accuracy", rows.torch_note});
  report.add({"sparse.debian_packages.majority_accuracy", kSection, "  the majority class", rows.majority,
              "accuracy", rows.majority_note});
}

SparseLayout packages_layout() {
  SparseLayout layout;
  layout.columns = {{"depends", ColumnKind::ids, std::nullopt},
                    {"maintainer", ColumnKind::ids, std::nullopt},
                    {"name_parts", ColumnKind::ids, std::nullopt},
                    {"summary", ColumnKind::text, std::nullopt}};
  layout.label = "section";
  return layout;
}

// The package file's examples, or why there are none (no package lists on this machine).
Result<std::shared_ptr<const SparseDataset>> read_packages(const BenchContext& context, const std::string& folder) {
  const auto path = folder + "/packages.jsonl";
  const auto run =
      run_captured({context.options.psgrad_path, "data", "debian-packages", "--out", path}, std::chrono::seconds(120));
  if (!run.started || run.exit_code != 0) {
    const auto first_line = run.output.substr(0, run.output.find('\n'));
    return Error{fmt::format("psgrad data debian-packages failed: {}", first_line)};
  }
  auto data = read_sparse_examples(path, packages_layout());
  if (!data) return Error{data.error()};
  return std::make_shared<const SparseDataset>(std::move(*data));
}

}  // namespace

void measure_debian_packages_accuracy(const BenchContext& context, const SparseEffort& effort, Report& report) {
  ScratchFolder folder;
  AccuracyRows rows;
  auto packages = read_packages(context, folder.path());
  if (!packages) {
    const auto note = "not measured: " + packages.error();
    rows.psgrad_note = rows.torch_note = rows.majority_note = note;
    add_rows(report, rows);
    return;
  }
  const auto all = first_examples(*packages, effort.debian_packages);
  const auto [train, dev] = split_last_of_each_class(*all, kDevFraction);
  rows.majority = exact(majority_accuracy(*train, *dev));
  rows.majority_note = fmt::format("{} train / {} dev packages, {} sections", train->count, dev->count,
                                   all->num_classes());

  auto job = debian_packages_job();
  const double batches_per_worker = effort.debian_epochs * static_cast<double>(train->count) /
                                    static_cast<double>(job.training.batch_size * job.cluster.num_workers);
  job.training.iterations = std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::ceil(batches_per_worker)));
  {
    ActorConfig config(0);
    prepare_local_run(config, job.cluster.num_workers);
    caf::actor_system system{config};
    auto summary = train_in_process(system, job, run_on_columns(train, dev));
    if (!summary) throw std::runtime_error("debian packages run failed: " + summary.error());
    rows.psgrad = exact(summary->run.final_accuracy);
    rows.psgrad_note = fmt::format("{:g} epochs, async 2 workers, 2 shards, {:.1f} s", effort.debian_epochs,
                                   summary->run.training_seconds);
  }

  const auto model = SparseModel::build(job.model.architecture, job.model.settings, all->num_classes()).value();
  auto description = peer_model(job, model);
  description["train"] = write_peer_keys(folder.path(), "train", model, *train);
  description["dev"] = write_peer_keys(folder.path(), "dev", model, *dev);
  const auto keys_path = folder.path() + "/keys.json";
  std::ofstream(keys_path) << description.dump() << "\n";
  const auto run = run_peer_script(context, "debian_packages_accuracy.py",
                                   {"--keys", keys_path, "--epochs", fmt::format("{}", effort.debian_epochs)},
                                   std::chrono::seconds(300));
  report.details("sparse")["debian_packages"] = {
      {"train", train->count},
      {"dev", dev->count},
      {"classes", all->num_classes()},
      {"iterations_per_worker", job.training.iterations},
      {"torch", run.skipped ? nlohmann::json(run.reason) : run.result}};
  if (run.skipped) {
    rows.torch_note = kTorchSkipped;
  } else {
    rows.torch = exact(run.result.at("dev_accuracy").get<double>());
    rows.torch_note = fmt::format("{:g} epochs, 1 process, {:.1f} s", effort.debian_epochs,
                                  run.result.value("training_seconds", 0.0));
  }
  add_rows(report, rows);
}

}  // namespace psgrad::bench
