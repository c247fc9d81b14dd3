#include "actors/sparse_resume.hpp"

#include <fmt/format.h>

#include "model/checked_count.hpp"
#include "model/checkpoint_fit.hpp"
#include "model/sparse_data_fingerprint.hpp"

namespace psgrad {

Status check_sparse_resume(const SparseCheckpoint& checkpoint, const TrainingJob& job, const SparseModel& model,
                           const SparseDataset& train, const std::string& row_optimizer) {
  const auto misfit = [](const std::string& problem) {
    return Error{fmt::format("checkpoint does not fit this run: {}", problem)};
  };
  if (auto problem = shard_parts_problem(checkpoint)) return misfit(*problem);
  if (checkpoint.row_optimizer != row_optimizer)
    return misfit(fmt::format("its tables stepped with {}, this run's with {}", checkpoint.row_optimizer,
                              row_optimizer));
  const auto& tables = checkpoint.shards[0].tables;
  if (tables.size() != model.fields().size())
    return misfit(fmt::format("{} tables, where the model '{}' has {} fields", tables.size(),
                              job.model.architecture, model.fields().size()));
  for (std::size_t t = 0; t < tables.size(); ++t)
    if (tables[t].width != model.fields()[t].width)
      return misfit(fmt::format("table {} has rows of width {}, the model's field {} of {}", t, tables[t].width, t,
                                model.fields()[t].width));
  const auto& dense = checkpoint.dense;
  if (dense.data)
    if (auto differs = data_difference(fingerprint_of(train, train.origin), *dense.data, "this run", "checkpoint"))
      return Error{*differs};
  ResumingRun run;
  run.total_steps = job.cluster.mode == TrainingMode::sync
                        ? job.training.iterations
                        : saturating_product(job.training.iterations, job.cluster.num_workers);
  run.train_examples = train.count;
  if (auto problem = checkpoint_misfit(dense, run)) return misfit(*problem);
  const auto& layout = model.dense().layout();
  if (auto differs = layout.mismatch(dense.layout_hash, dense.weights.size()))
    return misfit(fmt::format("its dense part is for another model ({})", *differs));
  auto optimizer = build_optimizer(job, layout);
  if (!optimizer) return Error{optimizer.error()};
  if (auto problem = (*optimizer)->state_problem(dense.optimizer)) return misfit(*problem);
  return success();
}

}  // namespace psgrad
