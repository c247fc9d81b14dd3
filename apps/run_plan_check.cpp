#include "apps/run_plan_check.hpp"

#include <fmt/format.h>

#include "actors/local_training.hpp"
#include "actors/training_job.hpp"

namespace psgrad {

Status check_run_plan(const Config& config, std::uint64_t input_width, std::uint64_t classes) {
  const TrainingJob& job = config;
  auto model = build_model(job, static_cast<std::size_t>(input_width), static_cast<std::size_t>(classes));
  if (!model) return Error{fmt::format("{}: model: {}", config.source, model.error())};
  // The server's optimizer, once; each shard's is built below.
  auto optimizer = build_optimizer(job, model->layout());
  if (!optimizer) return Error{fmt::format("{}: optimizer: {}", config.source, optimizer.error())};
  if (job.cluster.servers > 1) {
    auto cuts = server_shard_cuts(job, model->layout(), job.cluster.servers);
    if (!cuts) return Error{fmt::format("{}: cluster.servers: {}", config.source, cuts.error())};
  }
  return success();
}

}  // namespace psgrad
