#include "model/run_features.hpp"

#include <stdexcept>

#include <fmt/format.h>

namespace psgrad {

namespace {

std::vector<RunFeature> make_run_features() {
  const auto offered = [](std::string name, std::string what, std::string with_tables = {}) {
    return RunFeature{std::move(name), std::move(what), nullptr, {}, std::move(with_tables)};
  };
  const auto not_with_tables = [](std::string name, std::string what, std::function<bool(const TrainingJob&)> used_by,
                                  std::string why) {
    return RunFeature{std::move(name), std::move(what), std::move(used_by), std::move(why), {}};
  };
  return {
      offered("cluster.mode", "sync, async or ssp training"),
      offered("train --processes", "the same run with its roles in processes of their own on this machine",
              "table shards are processes of their own, `psgrad shard --tables`"),
      offered("serve, work, shard", "a run's roles started by hand, on any hosts",
              "`psgrad shard --tables --index i` holds table shard i"),
      offered("launch --hostfile", "every role of a run started on the hosts a file lists",
              "a host's `shards=K` starts table shards"),
      offered("launch --slurm", "every role of a run started inside a Slurm allocation",
              "tasks 1..cluster.servers hold the table shards, the rest work"),
      offered("cluster.servers", "how many shards hold the parameters",
              "the tables' keys are split over that many table shards, and the dense part is cut into that many "
              "server shards as for any model (into fewer when it is too small to cut further: those shards hold "
              "only keys)"),
      offered("serve --remote-shards", "dense parameter shards in `psgrad shard --index i` processes",
              "the dense part's shards 1.. (as many as it can be cut into) in `psgrad shard --index i` processes, "
              "beside the table shards' `psgrad shard --tables i` processes"),
      offered("cluster.wire", "fp32, bf16 or topk encoding of weights and gradients",
              "applies to the dense part; table rows travel as fp32"),
      offered("cluster.pipeline", "a worker computes its next gradient while one is out",
              "in sync mode a worker's rows, like its gradient, feed the step after the one its weights are from, "
              "and a table shard answers a pull a version behind with the rows as they were before its last step"),
      offered("cluster.backup_workers", "a sync step uses the first gradients to arrive and drops the rest",
              "the dense part's first shard chooses each step's workers and tells the other shards, dense and "
              "table; they sum those workers' gradients and rows and drop the rest"),
      offered("cluster.elastic", "workers may join while training runs",
              "a joining worker dials every table shard; in sync mode the dense part's first shard tells the table shards "
              "which workers each step took, so they sum the joined worker's rows from the step it joins"),
      offered("training.patience", "stop after this many evaluations without a better dev accuracy"),
      offered("training.save_best", "keep the best evaluated weights instead of the last",
              "each table shard keeps the best evaluation's rows (a copy of its rows); in sync mode each "
              "evaluation's step waits until it is scored, in async and ssp the rows are those the shards hold "
              "when it is scored"),
      not_with_tables("training.with_averages",
                      "evaluate, keep and save the optimizer's weight averages instead of the weights",
                      [](const TrainingJob& job) { return job.training.with_averages; },
                      "table rows step by lazy row optimizers, which touch a row only when a batch uses it and "
                      "keep no averages"),
      offered("work --retry", "a worker reconnects when its server goes away",
              "a table shard process ends with its server: start one again beside the resumed server"),
      offered("training.checkpoint_path, --resume", "checkpoints, and runs continued from them",
              "a checkpoint holds every row the tables made"),
      offered("predict, eval", "a saved model's predictions and scores", "on the same named columns"),
      offered("psgrad.train (Python)", "training in this Python process, predicting with the trained model",
              "X is named columns: a pandas DataFrame or a dict of arrays"),
  };
}

const RunFeature* find_feature(const std::string& name) {
  for (const auto& feature : run_features())
    if (feature.name == name) return &feature;
  return nullptr;
}

Error refusal(const RunFeature& feature) {
  return Error{fmt::format("{} is not offered for models with embedding tables yet: {}", feature.name,
                           feature.not_with_tables)};
}

}  // namespace

const std::vector<RunFeature>& run_features() {
  static const std::vector<RunFeature> features = make_run_features();
  return features;
}

Status check_run_features(const TrainingJob& job, bool has_tables) {
  if (!has_tables) return success();
  for (const auto& feature : run_features())
    if (!feature.not_with_tables.empty() && feature.used_by && feature.used_by(job)) return refusal(feature);
  return success();
}

Status check_run_feature(const std::string& name, bool has_tables) {
  const auto* feature = find_feature(name);
  if (!feature) throw std::logic_error("no run feature named " + name);
  if (!has_tables || feature->not_with_tables.empty()) return success();
  return refusal(*feature);
}

std::string run_features_markdown() {
  std::string out =
      "# Features by parameter kind\n\n"
      "Generated by `psgrad config features` from the table every refusal comes from "
      "(`model/run_features.cpp`); do not edit by hand. A model's parameters are dense arrays, or dense arrays "
      "and embedding tables (`hashembed_mlp.v1`).\n\n"
      "| Feature | What it does | Dense arrays | With embedding tables |\n"
      "|---|---|---|---|\n";
  for (const auto& feature : run_features()) {
    // A feature offered in part says both where it is and where not yet.
    std::string tables;
    if (feature.not_with_tables.empty())
      tables = feature.with_tables.empty() ? "yes" : "yes: " + feature.with_tables;
    else if (feature.with_tables.empty())
      tables = "not yet: " + feature.not_with_tables;
    else
      tables = "yes " + feature.with_tables + "; not yet " + feature.not_with_tables;
    out += fmt::format("| `{}` | {} | yes | {} |\n", feature.name, feature.what, tables);
  }
  return out;
}

}  // namespace psgrad
