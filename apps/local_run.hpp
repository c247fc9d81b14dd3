// A prepared run trained with every actor in this process: what `psgrad train` and the Python module share.
#pragma once

#include <optional>

#include "caf/actor_system.hpp"
#include "actors/actor_config.hpp"
#include "actors/evaluator.hpp"
#include "actors/trained_run.hpp"
#include "actors/training_driver.hpp"
#include "apps/run_setup.hpp"
#include "model/checkpoint.hpp"

namespace psgrad {

// The actor system's threads and network settings, from the run's config.
ActorConfig run_actor_config(const PreparedRun& run);
// The same, set up for a run whose workers are all in this process (actors/local_training.hpp).
ActorConfig local_actor_config(const PreparedRun& run);

// Trains on the run's data, dense or named columns for a model with tables, with the hooks
// (apps/run_hooks.hpp; their checkpoints taken whole, with the tables) and the best-weights watch; each
// evaluation goes to the run's output, then to also_report if set. Blocks until the run ends.
Result<TrainedRun> train_locally(caf::actor_system& system, const PreparedRun& run, DriverHooks hooks,
                                 std::optional<TrainingCheckpoint> resume, ReportCallback also_report = {});

}  // namespace psgrad
