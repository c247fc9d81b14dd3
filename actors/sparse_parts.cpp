#include "actors/sparse_parts.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/local_training.hpp"
#include "actors/parameter_server.hpp"
#include "actors/row_router.hpp"
#include "runtime/error_text.hpp"

namespace psgrad {

Result<ParameterServerActor> spawn_dense_server(caf::actor_system& system, const TrainingJob& job,
                                                SparseModel& model, const TrainingCheckpoint* resume) {
  model.dense().initialize(derive_seed(job.training.seed, RandomStream::initial_weights));
  auto state = std::make_shared<ParameterServerState>();
  state->layout = model.dense().layout();
  state->weights.assign(model.dense().weights().begin(), model.dense().weights().end());
  auto optimizer = build_optimizer(job, state->layout);
  if (!optimizer) return Error{optimizer.error()};
  state->optimizer = std::move(optimizer).value();
  if (resume) {
    if (!state->optimizer->set_state(resume->optimizer))
      return Error{fmt::format("checkpoint's optimizer state does not fit {}", job.optimizer.name)};
    state->weights = resume->weights;
    state->version = resume->version;
  }
  state->mode = job.cluster.mode;
  state->wire = job.cluster.wire;
  state->ordered_answers = job.cluster.ordered_answers;
  return spawn_parameter_server(system, std::move(state));
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
    self->request(shards[i], job.cluster.request_timeout, tables_atom::value, version)
        .receive(
            [&](PulledRows& rows) {
              if (!rows.refusal.empty()) failed = fmt::format("table shard {}: {}", i, rows.refusal);
              parts.push_back(std::move(rows));
            },
                 [&](caf::error& error) { failed = fmt::format("table shard {}: {}", i, error_text(system, error)); });
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

}  // namespace psgrad
