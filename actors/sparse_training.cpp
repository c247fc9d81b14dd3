#include "actors/sparse_training.hpp"

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/embedding_shard.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "actors/row_router.hpp"
#include "actors/sparse_checkpoint_collector.hpp"
#include "actors/evaluator.hpp"
#include "actors/sparse_parts.hpp"
#include "actors/resume_check.hpp"
#include "actors/data_worker.hpp"
#include "model/sparse_batcher.hpp"
#include "model/sparse_data_fingerprint.hpp"
#include "model/run_features.hpp"
#include "model/sparse_model.hpp"
#include "runtime/error_text.hpp"

namespace psgrad {

namespace {

Status check_run(const TrainingJob& job, const SparseDataset* train, const SparseDataset* dev,
                 const DriverHooks& hooks) {
  if (job.cluster.num_workers == 0) return Error{"at least one worker is needed"};
  if (job.cluster.servers == 0) return Error{"cluster.servers: at least one table shard is needed"};
  if (auto offered = check_run_features(job, true); !offered) return offered;
  if (hooks.on_checkpoint)
    return Error{"a sparse run's checkpoints hold its tables too: they come through SparseCheckpointing, not "
                 "hooks.on_checkpoint"};
  if (!train) return Error{"no training data"};
  if (auto problem = sparse_dataset_problem(*train)) return Error{"training data: " + *problem};
  if (!dev) return Error{"no dev data to evaluate on"};
  if (auto problem = sparse_dataset_problem(*dev)) return Error{"dev data: " + *problem};
  if (dev->num_classes() != train->num_classes())
    return Error{fmt::format("the dev data has {} classes, the training data {}", dev->num_classes(),
                             train->num_classes())};
  return success();
}

Result<std::vector<EmbeddingShardActor>> spawn_table_shards(caf::actor_system& system, const TrainingJob& job,
                                                            const SparseModel& model,
                                                            const TableOptimizerChoice& optimizer,
                                                            std::uint64_t start_iteration, bool checkpoints,
                                                            const std::optional<TrainingCheckpoint>& resume) {
  auto setup = embedding_shard_setup(job, model, optimizer, start_iteration, checkpoints,
                                     resume ? std::optional<std::uint64_t>(resume->version) : std::nullopt);
  std::vector<EmbeddingShardActor> shards;
  for (std::uint32_t i = 0; i < setup.count; ++i) {
    setup.index = i;
    if (resume) {
      auto part = tables_for_shard(*resume, i, setup.count);
      if (!part) return Error{fmt::format("checkpoint does not fit this run: {}", part.error())};
      setup.restore = std::move(part).value();
    }
    auto shard = spawn_embedding_shard(system, setup);
    if (!shard) return Error{shard.error()};
    shards.push_back(std::move(shard).value());
  }
  if (auto introduced = introduce_table_shards(system, job, shards); !introduced) return Error{introduced.error()};
  return shards;
}

}  // namespace

Result<SparseTrainingSummary> train_sparse_in_process(caf::actor_system& system, const TrainingJob& job,
                                                      std::shared_ptr<const SparseDataset> train,
                                                      std::shared_ptr<const SparseDataset> dev,
                                                      ReportCallback on_report, const TableOptimizerChoice& tables,
                                                      DriverHooks hooks, SparseCheckpointing checkpointing,
                                                      SnapshotCallback on_snapshot) {
  if (auto checked = check_run(job, train.get(), dev.get(), hooks); !checked) return Error{checked.error()};
  auto model = SparseModel::build_for_data(job.model, *train, "data");
  if (!model) return Error{model.error()};
  // The dense weights are laid out for the training data's number columns: the dev set must have them.
  if (auto checked = model->check_inputs(*dev, "dev data"); !checked) return Error{checked.error()};
  // The row optimizer's name, for the checkpoints (a table of width 1 builds as any other).
  auto row_optimizer = build_row_optimizer(tables, job.optimizer, 1);
  if (!row_optimizer) return Error{row_optimizer.error()};
  const auto row_optimizer_name = (*row_optimizer)->name();
  const auto& resume = checkpointing.resume;
  if (resume) {
    if (auto fits = check_resume(*resume, job, resuming_model(*model, *train, row_optimizer_name)); !fits)
      return Error{fits.error()};
    continue_from(hooks, *resume);
  }
  auto server = spawn_dense_server(system, job, *model, resume ? &*resume : nullptr);
  if (!server) return Error{server.error()};
  const bool checkpoints = static_cast<bool>(checkpointing.on_checkpoint);
  // Sync shards hold at each periodic checkpoint's step until it is gathered; a signal's has none.
  const bool periodic_checkpoints = checkpoints && !checkpointing.checkpoints_on_signal_only;
  auto shards =
      spawn_table_shards(system, job, *model, tables, hooks.start_iteration, periodic_checkpoints, resume);
  std::vector<caf::actor> spawned{caf::actor_cast<caf::actor>(*server)};
  const auto end_all = [&spawned] {
    // Local actors would otherwise live on until the system shuts down.
    for (auto& actor : spawned) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  };
  if (!shards) {
    end_all();
    return Error{shards.error()};
  }
  for (const auto& shard : *shards) spawned.push_back(caf::actor_cast<caf::actor>(shard));
  std::vector<DataWorkerActor> workers;
  for (std::size_t k = 0; k < job.cluster.num_workers; ++k) {
    std::optional<WorkerStreamState> stream;
    if (resume)
      for (const auto& saved : resume->workers)
        if (saved.worker == k) stream = saved;
    DataWorkerSetup setup{job, k, nullptr, worker_delay(job, k), stream};
    setup.tables = WorkerTables{train, *shards, {}};
    auto worker = spawn_data_worker(system, std::move(setup));
    if (!worker) {
      end_all();
      return Error{worker.error()};
    }
    spawned.push_back(caf::actor_cast<caf::actor>(worker->actor));
    workers.push_back(std::move(worker->actor));
  }
  auto evaluator = spawn_evaluator(
      system, job, EvaluatorSetup{nullptr, EvaluatorTables{dev, *shards}, std::move(on_report), std::move(on_snapshot),
                                  nullptr, hooks.on_event});
  if (!evaluator) {
    end_all();
    return Error{evaluator.error()};
  }
  spawned.push_back(caf::actor_cast<caf::actor>(*evaluator));
  // The driver sees one parameter server: the tables' shards are the workers' and the evaluator's business.
  TrainingJob dense_job = job;
  dense_job.cluster.servers = 1;
  std::optional<SparseCheckpointCollector> collector;
  if (checkpoints) {
    collector.emplace(system, SparseCheckpointSetup{*shards, job.cluster.request_timeout, job.cluster.mode,
                                                    row_optimizer_name, fingerprint_of(*train, train->origin),
                                                    std::move(checkpointing.config),
                                                    std::move(checkpointing.on_checkpoint)});
    hooks.on_checkpoint = collector->hook();
    hooks.checkpoints_on_signal_only = checkpointing.checkpoints_on_signal_only;
  }
  hooks.on_worker_lost = tell_shards_of_lost_workers(*shards);
  auto driver = spawn_training_driver(system, dense_job, *server, workers, *evaluator, std::move(hooks));
  auto run = run_driver(system, driver);
  // Every checkpoint taken is written before the shards go.
  const auto collected = collector ? collector->wait() : success();
  Result<SparseTrainingSummary> outcome = Error{""};
  if (!run) {
    outcome = Error{run.error()};
  } else if (!collected) {
    outcome = Error{collected.error()};
  } else {
    auto rows = collect_tables(system, job, *shards, *model, run->final_weights.version);
    if (!rows) outcome = Error{rows.error()};
    else outcome = SparseTrainingSummary{std::move(run).value(), std::move(rows).value()};
  }
  end_all();
  return outcome;
}

}  // namespace psgrad
