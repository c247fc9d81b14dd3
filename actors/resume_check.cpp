#include "actors/resume_check.hpp"

#include <fmt/format.h>

#include "model/checked_count.hpp"
#include "model/checkpoint_fit.hpp"
#include "model/checkpoint_tables.hpp"
#include "model/sparse_data_fingerprint.hpp"

namespace psgrad {

namespace {

std::optional<std::string> tables_misfit(const TrainingCheckpoint& checkpoint, const ResumedTables& expected,
                                         const TrainingJob& job) {
  if (auto problem = shard_parts_problem(checkpoint)) return problem;
  if (checkpoint.tables->row_optimizer != expected.row_optimizer)
    return fmt::format("its tables stepped with {}, this run's with {}", checkpoint.tables->row_optimizer,
                       expected.row_optimizer);
  const auto& tables = checkpoint.tables->shards[0].tables;
  if (tables.size() != expected.widths.size())
    return fmt::format("{} tables, where the model '{}' has {} fields", tables.size(), job.model.architecture,
                       expected.widths.size());
  for (std::size_t t = 0; t < tables.size(); ++t)
    if (tables[t].width != expected.widths[t])
      return fmt::format("table {} has rows of width {}, the model's field {} of {}", t, tables[t].width, t,
                         expected.widths[t]);
  return std::nullopt;
}

}  // namespace

Status check_resume(const TrainingCheckpoint& checkpoint, const TrainingJob& job, const ResumingModel& model) {
  if (checkpoint.tables && !model.tables)
    return Error{"checkpoint holds embedding tables, and the config's model has none: resume it with the config of "
                 "the run that wrote it, or with --resume alone"};
  if (!checkpoint.tables && model.tables)
    return Error{"checkpoint holds no embedding tables, and the config's model has them: resume it with the config "
                 "of the run that wrote it, or with --resume alone"};
  const auto misfit = [](const std::string& problem) {
    return Error{fmt::format("checkpoint does not fit this run: {}", problem)};
  };
  // The tables first: a table of another width also changes the dense layout, and says so less plainly.
  if (model.tables)
    if (auto problem = tables_misfit(checkpoint, *model.tables, job)) return misfit(*problem);
  if (const auto differs = model.layout->mismatch(checkpoint.layout_hash, checkpoint.weights.size()))
    return Error{fmt::format("checkpoint is for another model ({} for the config's model)", *differs)};
  // Its workers' streams index into the data it was written on: on other data of the same shape they
  // would fit, and train on the wrong examples without a word.
  if (checkpoint.data && model.train)
    if (auto differs = data_difference(*model.train, *checkpoint.data, "this run", "checkpoint"))
      return Error{fmt::format("{}; resume on the data it was written for, or start afresh without --resume", *differs)};
  ResumingRun run;
  run.total_steps = job.cluster.mode == TrainingMode::sync
                        ? job.training.iterations
                        : saturating_product(job.training.iterations, job.cluster.num_workers);
  run.train_examples = model.train_examples;
  if (auto problem = checkpoint_misfit(checkpoint, run)) return misfit(*problem);
  auto optimizer = build_optimizer(job, *model.layout);
  if (!optimizer) return Error{optimizer.error()};
  if (auto problem = (*optimizer)->state_problem(checkpoint.optimizer)) return misfit(*problem);
  return success();
}

ResumingModel resuming_model(const SparseModel& model, const SparseDataset& train, std::string row_optimizer) {
  ResumingModel resuming;
  resuming.layout = &model.dense().layout();
  resuming.train_examples = train.count;
  resuming.train = fingerprint_of(train, train.origin);
  auto& tables = resuming.tables.emplace();
  tables.row_optimizer = std::move(row_optimizer);
  for (const auto& field : model.fields()) tables.widths.push_back(field.width);
  return resuming;
}

}  // namespace psgrad
