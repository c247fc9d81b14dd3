// The driver: runs the synchronous barrier or the asynchronous fan-in loop between the server and
// the workers, sends snapshots to the evaluator, and answers its "run" request with a summary.
#pragma once

#include <string>
#include <vector>

#include "caf/actor.hpp"
#include "caf/actor_system.hpp"
#include "actors/interfaces.hpp"
#include "actors/training_job.hpp"

namespace psgrad {

// The driver answers one (run_atom) request with a TrainingSummary, or an error, then quits.
// names label the workers in messages (e.g. their hosts).
caf::actor spawn_training_driver(caf::actor_system& system, const TrainingJob& job,
                                 ParameterServerActor server, std::vector<DataWorkerActor> workers,
                                 EvaluatorActor evaluator, std::vector<std::string> names = {});

}  // namespace psgrad
