// Turns a validated Config into the TrainingJob and actor-system settings the actors take.
#pragma once

#include "actors/actor_config.hpp"
#include "actors/training_job.hpp"
#include "io/config.hpp"

namespace psgrad {

TrainingJob job_from_config(const Config& config);
NetworkSettings network_from_config(const Config& config);

}  // namespace psgrad
