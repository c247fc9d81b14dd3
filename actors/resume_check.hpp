// Whether a checkpoint fits the run about to continue from it, for every model: every part is checked
// against the run before anything is spawned, so a misfit is one line naming the field, not a fault
// mid-run.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "actors/training_job.hpp"
#include "model/checkpoint.hpp"
#include "model/data_fingerprint.hpp"
#include "model/parameter_layout.hpp"
#include "model/result.hpp"
#include "model/sparse_dataset.hpp"
#include "model/sparse_model.hpp"

namespace psgrad {

// What a run of a model with embedding tables holds its checkpoint's tables part to.
struct ResumedTables {
  std::string row_optimizer;          // RowOptimizer::name() of this run's tables
  std::vector<std::uint64_t> widths;  // the model's table widths, in field order
};

// The run about to continue.
struct ResumingModel {
  const ParameterLayout* layout = nullptr;  // of its dense parameters
  std::size_t train_examples = 0;
  std::optional<DataFingerprint> train;     // its training data, when known
  std::optional<ResumedTables> tables;      // none: a model without tables
};

// The first thing about the checkpoint that does not fit: its kind of model, its layout, its training
// data, a counter or stream, the optimizer's state, the tables' parts, row optimizer and widths. Errors
// do not name the file; the caller does.
Status check_resume(const TrainingCheckpoint& checkpoint, const TrainingJob& job, const ResumingModel& model);

// A model with tables as check_resume sees it; model and train must outlive the result.
ResumingModel resuming_model(const SparseModel& model, const SparseDataset& train, std::string row_optimizer);

}  // namespace psgrad
