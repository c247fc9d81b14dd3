// Runs a training job with every actor in this process and hands back its summary (a test fails when
// the run does); the helper the actor tests share.
#pragma once

#include <cstdint>
#include <memory>
#include <numeric>
#include <optional>
#include <vector>

#include <doctest/doctest.h>

#include "caf/actor_system.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"

namespace psgrad::testing {

inline TrainingSummary train_locally(const TrainingJob& job, std::shared_ptr<const Dataset> train_data,
                                     std::shared_ptr<const Dataset> dev_data, std::size_t threads = 2) {
  ActorConfig config(threads);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  auto summary = train_in_process(system, job, train_data, dev_data, nullptr);
  REQUIRE_MESSAGE(summary.ok(), (summary.ok() ? "" : summary.error()));
  return std::move(summary).value();
}

// The same, on one data set for training and evaluation, resumed from `resume` when given, with every
// checkpoint the run takes appended to `checkpoints` when given.
inline TrainingSummary train_locally(const TrainingJob& job, std::shared_ptr<const Dataset> data, std::size_t threads,
                                     const std::optional<TrainingCheckpoint>& resume,
                                     std::vector<TrainingCheckpoint>* checkpoints = nullptr) {
  ActorConfig config(threads);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  DriverHooks hooks;
  hooks.on_checkpoint = [checkpoints](const TrainingCheckpoint& checkpoint) {
    if (checkpoints) checkpoints->push_back(checkpoint);
  };
  auto summary = train_in_process(system, job, data, data, nullptr, hooks, resume);
  REQUIRE_MESSAGE(summary.ok(), (summary.ok() ? "" : summary.error()));
  return std::move(summary).value();
}

inline std::uint64_t total(const std::vector<std::uint64_t>& counts) {
  return std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
}

}  // namespace psgrad::testing
