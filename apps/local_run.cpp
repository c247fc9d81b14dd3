// Spawns a prepared run's actors in this process and waits for its summary.
#include "apps/local_run.hpp"

#include <utility>

#include "actors/local_training.hpp"
#include "apps/run_hooks.hpp"

namespace psgrad {

ActorConfig run_actor_config(const PreparedRun& run) {
  return ActorConfig(static_cast<std::size_t>(run.config.cluster.threads), network_settings(run.config.cluster));
}

ActorConfig local_actor_config(const PreparedRun& run) {
  auto config = run_actor_config(run);
  prepare_local_run(config, run.job().cluster.num_workers);
  return config;
}

Result<TrainedRun> train_locally(caf::actor_system& system, const PreparedRun& run, DriverHooks hooks,
                                 std::optional<TrainingCheckpoint> resume, ReportCallback also_report) {
  auto on_report = run.output->callback();
  if (also_report)
    on_report = [shown = std::move(on_report), also = std::move(also_report)](const EvaluationReport& report) {
      shown(report);
      also(report);
    };
  InProcessRun local{run.data.train, run.data.dev, std::nullopt, std::move(on_report), snapshot_callback(run),
                     std::move(hooks), std::move(resume), run.config_text};
  if (run.tables)
    local.tables = RunTables{run.tables->data.train, run.tables->data.dev, table_optimizer_choice(run.config.tables)};
  return train_in_process(system, run.job(), std::move(local));
}

}  // namespace psgrad
