// What a run of a model with embedding tables adds to the one run set-up (run_setup.hpp): its
// named-column data, the tables' memory check and size, and the model file with the tables.
#pragma once

#include <optional>
#include <string>

#include "caf/actor_system.hpp"
#include "actors/resume_check.hpp"
#include "actors/trained_run.hpp"
#include "apps/run_setup.hpp"
#include "model/checkpoint.hpp"

namespace psgrad {

// Whether the options' config names a model with embedding tables, or, without --config, --resume names
// a checkpoint with tables. A config that does not load is not one: the run's set-up then reports why.
bool names_model_with_tables(const RunOptions& options, const std::string& resume);

// prepare_run's way for a config whose model has tables: what tables do not offer is refused in one
// line before any data is read (model/run_features.hpp); where the tables' shards live on this machine
// (every role but a lone server), refused when they could outgrow it.
Result<PreparedRun> prepare_tables_run(const RunOptions& options, Config config);

// The run's model as check_resume holds a checkpoint to it. run.tables must be set.
ResumingModel resuming_model_of(const PreparedRun& run);

// Writes the trained model file: config, the dense weights given (the kept ones with training.save_best),
// each table's touched rows (the shards kept the best evaluation's), columns and classes.
Status save_tables_model(const std::string& path, const PreparedRun& run, const TrainedRun& trained,
                         const Weights& weights);

}  // namespace psgrad
