// The parts a run of a model with tables adds to any run, in one process or across processes: the dense
// part's server, the table shards' setup, introducing the shards to each other, and reading every row.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <optional>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/embedding_shard.hpp"
#include "actors/interfaces.hpp"
#include "actors/parameter_server.hpp"
#include "actors/training_job.hpp"
#include "model/result.hpp"
#include "model/checkpoint_tables.hpp"
#include "model/sparse_dataset.hpp"
#include "model/sparse_model.hpp"
#include "model/sparse_rows.hpp"
#include "model/table_optimizer.hpp"

namespace psgrad {

// Sync with backup workers or elastic joins: each step's workers are not the run's first ones, so the
// dense server tells the table shards which workers each step took.
bool told_step_workers(const TrainingJob& job);

// How many of the cluster.servers shards hold part of the dense arrays: all of them, or as many as the
// arrays can be cut into (the others hold only table keys).
std::size_t dense_part_shards(const TrainingJob& job, const ParameterLayout& layout);

// The dense part's whole server state: its weights drawn from the run's seed (or a checkpoint's), its
// optimizer. When told_step_workers the step's first shard tells `shards` (filled before training starts)
// which workers each step took.
Result<std::shared_ptr<ParameterServerState>> dense_part_state(
    const TrainingJob& job, SparseModel& model, const TrainingCheckpoint* resume = nullptr,
    std::shared_ptr<const std::vector<EmbeddingShardActor>> shards = nullptr);

// The dense part's servers, one or dense_part_shards shards as for any model of dense arrays: the model's
// dense weights, initialized from the run's seed, and its optimizer; or a checkpoint's weights, optimizer
// state and version (resume: a sparse checkpoint's dense part). When told_step_workers the first (which
// chooses each step's workers) tells `shards` (filled before training starts) which workers each step took.
Result<std::vector<ParameterServerActor>> spawn_dense_part_servers(
    caf::actor_system& system, const TrainingJob& job, SparseModel& model, const TrainingCheckpoint* resume = nullptr,
    std::shared_ptr<const std::vector<EmbeddingShardActor>> shards = nullptr);

// Per field, the settings of its table: its width, and the seed its rows' first values are drawn from.
std::vector<EmbeddingTableSettings> seeded_table_settings(const TrainingJob& job, const SparseModel& model);

// Every table shard's setup but its index and restored rows: cluster.servers shards of every field's
// table, holding sync steps for evaluations (and checkpoints, when taken) from start_iteration on;
// resumed_version: the steps a resumed checkpoint had taken.
EmbeddingShardSetup embedding_shard_setup(const TrainingJob& job, const SparseModel& model,
                                          const TableOptimizerChoice& optimizer, std::uint64_t start_iteration,
                                          bool checkpoints = false,
                                          std::optional<std::uint64_t> resumed_version = std::nullopt);

// Sync with several shards: each learns its peers before any push can reach it, to tell them its sums
// of squares. An error names the shard that did not acknowledge.
Status introduce_table_shards(caf::actor_system& system, const TrainingJob& job,
                              const std::vector<EmbeddingShardActor>& shards);

// The driver's on_worker_lost for a sync run: every shard stops waiting for that worker's pushes.
std::function<void(std::size_t)> tell_shards_of_lost_workers(std::vector<EmbeddingShardActor> shards);

// Every row of every table once the shards have taken `version` steps, in key order per field; with
// training.save_best, the rows the shards kept at the best evaluation instead.
Result<std::vector<SparseRows>> collect_tables(caf::actor_system& system, const TrainingJob& job,
                                               const std::vector<EmbeddingShardActor>& shards,
                                               const SparseModel& model, std::uint64_t version);

// A model with tables trains on named columns; its rows step with `optimizer`.
struct RunTables {
  std::shared_ptr<const SparseDataset> train, dev;
  TableOptimizerChoice optimizer;  // lazy Adam on the run's Adam.v1 settings unless it chooses Adagrad
};

// The actors holding a model's tables in this process, and what the rest of the run needs of them.
struct LocalTables {
  std::shared_ptr<SparseModel> model;  // built for the training data
  std::vector<ParameterServerActor> dense_servers;  // the dense part's, one or cluster.servers shards
  std::vector<EmbeddingShardActor> shards;
  std::string row_optimizer;  // its RowOptimizer::name(), for checkpoints
};

// Checks the tables' data (and a resume checkpoint against the model) and spawns the dense part's servers
// and cluster.servers table shards, introduced to each other; the shards hold sync steps for evaluations
// from start_iteration on, and for checkpoints when `checkpoints`. An error has spawned nothing.
Result<LocalTables> spawn_local_tables(caf::actor_system& system, const TrainingJob& job, const RunTables& tables,
                                       std::uint64_t start_iteration, bool checkpoints,
                                       const std::optional<TrainingCheckpoint>& resume);

}  // namespace psgrad
