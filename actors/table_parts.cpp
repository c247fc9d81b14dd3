#include "actors/table_parts.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "actors/resume_check.hpp"
#include "actors/row_router.hpp"
#include "model/sparse_batcher.hpp"
#include "runtime/error_text.hpp"

namespace psgrad {

bool told_step_workers(const TrainingJob& job) {
  return job.cluster.mode == TrainingMode::sync && (job.cluster.backup_workers > 0 || job.cluster.elastic);
}

std::size_t dense_part_shards(const TrainingJob& job, const ParameterLayout& layout) {
  // Every shard holds keys of the tables, so one may hold none of a small dense part (as ps-lite's slicer
  // leaves a server an empty range): the dense part takes as many of the shards as it can be cut into.
  for (auto count = job.cluster.servers; count > 1; --count)
    if (server_shard_cuts(job, layout, count)) return count;
  return 1;
}

Result<std::shared_ptr<ParameterServerState>> dense_part_state(
    const TrainingJob& job, SparseModel& model, const TrainingCheckpoint* resume,
    std::shared_ptr<const std::vector<EmbeddingShardActor>> shards) {
  model.dense().initialize(derive_seed(job.training.seed, RandomStream::initial_weights));
  auto made = dense_server_state(
      job, model.dense().layout(),
      std::vector<float>(model.dense().weights().begin(), model.dense().weights().end()), resume);
  if (!made) return Error{made.error()};
  auto state = std::move(made).value();
  // Backup workers: a step takes the first gradients to arrive; elastic: a step takes the workers that
  // joined by then. The table shards must sum the same workers' rows.
  if (shards && told_step_workers(job))
    state->on_step_workers = [shards](std::uint64_t version, const std::vector<std::uint32_t>& workers) {
      for (const auto& shard : *shards) caf::anon_send(shard, step_workers_atom::value, version, workers);
    };
  return state;
}

Result<std::vector<ParameterServerActor>> spawn_dense_part_servers(
    caf::actor_system& system, const TrainingJob& job, SparseModel& model, const TrainingCheckpoint* resume,
    std::shared_ptr<const std::vector<EmbeddingShardActor>> shards) {
  auto state = dense_part_state(job, model, resume, std::move(shards));
  if (!state) return Error{state.error()};
  TrainingJob sharded = job;
  sharded.cluster.servers = dense_part_shards(job, model.dense().layout());
  return spawn_parameter_servers(system, sharded, std::move(state).value());
}

std::vector<EmbeddingTableSettings> seeded_table_settings(const TrainingJob& job, const SparseModel& model) {
  std::vector<EmbeddingTableSettings> tables;
  for (std::size_t f = 0; f < model.fields().size(); ++f) {
    EmbeddingTableSettings table;
    table.width = model.fields()[f].width;
    table.init_seed = embedding_init_seed(job.training.seed, f);
    table.rows = model.fields()[f].rows;
    table.low = model.fields()[f].low;
    table.high = model.fields()[f].high;
    tables.push_back(table);
  }
  return tables;
}

EmbeddingShardSetup embedding_shard_setup(const TrainingJob& job, const SparseModel& model,
                                          const TableOptimizerChoice& optimizer, std::uint64_t start_iteration,
                                          bool checkpoints, std::optional<std::uint64_t> resumed_version) {
  EmbeddingShardSetup setup;
  setup.count = static_cast<std::uint32_t>(job.cluster.servers);
  setup.tables = seeded_table_settings(job, model);
  setup.optimizer = optimizer;
  setup.run_optimizer = job.optimizer;
  setup.mode = job.cluster.mode;
  setup.workers = static_cast<std::uint32_t>(job.cluster.num_workers);
  setup.keeps_best = job.training.save_best;
  setup.told_step_workers = told_step_workers(job);
  setup.pipelined = job.cluster.mode == TrainingMode::sync && job.cluster.pipeline;
  // A version is the run's iteration plus the steps a resumed checkpoint had taken beyond its iterations.
  const std::uint64_t offset = resumed_version ? *resumed_version - std::min(*resumed_version, start_iteration) : 0;
  setup.version = resumed_version.value_or(0);
  if (job.cluster.mode == TrainingMode::sync) {
    setup.holds = EvaluationHolds{start_iteration == 0, job.evaluation.frequency, offset, start_iteration,
                                  job.training.iterations};
    if (checkpoints)
      setup.checkpoint_holds =
          EvaluationHolds{false, job.training.checkpoint_every, offset, start_iteration, job.training.iterations};
  }
  return setup;
}

Status introduce_table_shards(caf::actor_system& system, const TrainingJob& job,
                              const std::vector<EmbeddingShardActor>& shards) {
  if (shards.size() == 1) return success();
  std::vector<TableShardPeer> peers;
  for (const auto& shard : shards) peers.push_back(caf::actor_cast<TableShardPeer>(shard));
  caf::scoped_actor self{system};
  for (std::size_t i = 0; i < shards.size(); ++i) {
    std::optional<std::string> refused;
    self->request(shards[i], job.cluster.request_timeout, peers_atom::value, peers)
        .receive([](bool) {},
                 [&](caf::error& error) { refused = fmt::format("table shard {}: {}", i, error_text(system, error)); });
    if (refused) return Error{*refused};
  }
  return success();
}

Result<std::vector<SparseRows>> collect_tables(caf::actor_system& system, const TrainingJob& job,
                                               const std::vector<EmbeddingShardActor>& shards,
                                               const SparseModel& model, std::uint64_t version) {
  caf::scoped_actor self{system};
  std::vector<PulledRows> parts;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    std::optional<std::string> failed;
    const auto on_rows = [&](PulledRows& rows) {
      if (!rows.refusal.empty()) failed = fmt::format("table shard {}: {}", i, rows.refusal);
      parts.push_back(std::move(rows));
    };
    const auto on_error = [&](caf::error& error) {
      failed = fmt::format("table shard {}: {}", i, error_text(system, error));
    };
    // The final evaluation's "scored" comes first: the evaluator sent it before answering the driver, whose
    // summary comes before this request (to a shard in another process, both go through one proxy, in order).
    if (job.training.save_best)
      self->request(shards[i], job.cluster.request_timeout, best_tables_atom::value).receive(on_rows, on_error);
    else
      self->request(shards[i], job.cluster.request_timeout, tables_atom::value, version).receive(on_rows, on_error);
    if (failed) return Error{*failed};
  }
  std::vector<std::size_t> widths;
  for (const auto& field : model.fields()) widths.push_back(field.width);
  return join_tables(parts, widths);
}

std::function<void(std::size_t)> tell_shards_of_lost_workers(std::vector<EmbeddingShardActor> shards) {
  return [shards = std::move(shards)](std::size_t worker) {
    for (const auto& shard : shards) caf::anon_send(shard, worker_lost_atom::value, static_cast<std::uint32_t>(worker));
  };
}

namespace {

Status check_tables_data(const RunTables& tables) {
  if (!tables.train) return Error{"no training data"};
  if (auto problem = sparse_dataset_problem(*tables.train)) return Error{"training data: " + *problem};
  if (!tables.dev) return Error{"no dev data to evaluate on"};
  if (auto problem = sparse_dataset_problem(*tables.dev)) return Error{"dev data: " + *problem};
  if (tables.dev->num_classes() != tables.train->num_classes())
    return Error{fmt::format("the dev data has {} classes, the training data {}", tables.dev->num_classes(),
                             tables.train->num_classes())};
  return success();
}

void stop_all(const std::vector<caf::actor>& actors) {
  for (const auto& actor : actors) caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
}

}  // namespace

Result<LocalTables> spawn_local_tables(caf::actor_system& system, const TrainingJob& job, const RunTables& tables,
                                       std::uint64_t start_iteration, bool checkpoints,
                                       const std::optional<TrainingCheckpoint>& resume) {
  if (job.cluster.servers == 0) return Error{"cluster.servers: at least one table shard is needed"};
  if (auto checked = check_tables_data(tables); !checked) return Error{checked.error()};
  auto model = SparseModel::build_for_data(job.model, *tables.train, "data");
  if (!model) return Error{model.error()};
  // The dense weights are laid out for the training data's number columns: the dev set must have them.
  if (auto checked = model->check_inputs(*tables.dev, "dev data"); !checked) return Error{checked.error()};
  // The row optimizer's name, for the checkpoints (a table of width 1 builds as any other).
  auto row_optimizer = build_row_optimizer(tables.optimizer, job.optimizer, 1);
  if (!row_optimizer) return Error{row_optimizer.error()};
  LocalTables local;
  local.row_optimizer = (*row_optimizer)->name();
  local.model = std::make_shared<SparseModel>(std::move(model).value());
  if (resume)
    if (auto fits = check_resume(*resume, job, resuming_model(*local.model, *tables.train, local.row_optimizer)); !fits)
      return Error{fits.error()};
  // Filled once the shards are spawned, before any step: the dense server tells them each step's workers.
  auto shard_list = std::make_shared<std::vector<EmbeddingShardActor>>();
  auto servers = spawn_dense_part_servers(system, job, *local.model, resume ? &*resume : nullptr, shard_list);
  if (!servers) return Error{servers.error()};
  local.dense_servers = std::move(servers).value();
  std::vector<caf::actor> spawned;
  for (const auto& server : local.dense_servers) spawned.push_back(caf::actor_cast<caf::actor>(server));
  auto setup = embedding_shard_setup(job, *local.model, tables.optimizer, start_iteration, checkpoints,
                                     resume ? std::optional<std::uint64_t>(resume->version) : std::nullopt);
  for (std::uint32_t i = 0; i < setup.count; ++i) {
    setup.index = i;
    if (resume) {
      auto part = tables_for_shard(*resume, i, setup.count);
      if (!part) {
        stop_all(spawned);
        return Error{fmt::format("checkpoint does not fit this run: {}", part.error())};
      }
      setup.restore = std::move(part).value();
    }
    auto shard = spawn_embedding_shard(system, setup);
    if (!shard) {
      stop_all(spawned);
      return Error{shard.error()};
    }
    spawned.push_back(caf::actor_cast<caf::actor>(*shard));
    local.shards.push_back(std::move(shard).value());
  }
  if (auto introduced = introduce_table_shards(system, job, local.shards); !introduced) {
    stop_all(spawned);
    return Error{introduced.error()};
  }
  *shard_list = local.shards;
  return local;
}

}  // namespace psgrad
