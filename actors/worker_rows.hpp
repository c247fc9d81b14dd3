// The rows of a worker's batches, for a model with embedding tables: per batch it looks up the batch's
// keys, pulls their rows from the table shards (split by key % shards, in parallel), and once the gradient
// is computed pushes the row gradients back, one push per shard. The worker's loop is the dense one; this
// is what a step adds when the model has tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "caf/error.hpp"
#include "actors/data_worker_self.hpp"
#include "actors/answer_watch.hpp"
#include "actors/sparse_interfaces.hpp"
#include "model/sparse_batcher.hpp"
#include "model/sparse_model.hpp"
#include "model/sparse_rows.hpp"

namespace psgrad {

// A worker's part of a model with embedding tables: its examples with id fields and the shards of rows.
struct WorkerTables {
  std::shared_ptr<const SparseDataset> train;
  std::vector<EmbeddingShardActor> shards;  // in index order
  // Per table shard (or none): it is a process on this host, so rows go to and from it through shared
  // memory (payloads/shared_rows.hpp).
  std::vector<bool> shards_on_this_host;
};

class WorkerRows {
 public:
  // One batch from lookup to push: its rows come from several shards, in any order. It is computed once it
  // has its rows and has been started (it has its weights).
  struct Step {
    bool started = false;
    SparseBatch batch;
    SparseBatcher::Position position;  // the stream's before this batch
    BatchLookup lookup;
    std::vector<PulledRows> answers;  // per shard
    std::size_t missing = 0;          // answers still to come
    // A pull ahead keeps its failure until the step starts: a run ending meanwhile never needs it.
    std::optional<std::pair<std::string, caf::error>> failure;
  };
  using StepHandle = std::shared_ptr<Step>;
  // Called when a started step has every row, or when a started step's pull failed (who, what).
  using OnRows = std::function<void(const StepHandle&)>;
  using OnFailure = std::function<void(const std::string&, const caf::error&)>;

  WorkerRows(DataWorkerBase* self, WorkerTables tables, std::size_t worker_index, OnRows on_rows, OnFailure on_failure);

  // The next batch of `batches`, its lookup by `model` and the pulls of its rows of `version`.
  StepHandle pull(SparseBatcher& batches, SparseModel& model, std::uint64_t version);
  // The step is to be computed now: on_rows at once if its rows are in, else when they come.
  void start(const StepHandle& step);
  // The step's rows per field, in key order, for the model to compute with.
  Result<std::vector<SparseRows>> rows_of(const Step& step, const SparseModel& model) const;
  // Every shard gets a push, an empty one too: a sync step waits for every worker's. With squares (async)
  // each carries the sums of squares of the worker's gradient of each table.
  void push(std::uint64_t version, const std::vector<SparseRows>& row_gradients, bool with_squares);

  // The first shard that owes an answer and has said nothing for longer than `timeout`.
  std::optional<std::size_t> silent_shard(std::chrono::nanoseconds timeout) const;
  // The shards' handles would keep them alive: let go.
  void release() { tables_.shards.clear(); }

 private:
  bool on_this_host(std::size_t shard) const {
    return shard < tables_.shards_on_this_host.size() && tables_.shards_on_this_host[shard];
  }
  void pull_failed(Step& step, std::size_t shard, const caf::error& error);

  DataWorkerBase* self_;
  WorkerTables tables_;
  std::uint32_t worker_index_;
  OnRows on_rows_;
  OnFailure on_failure_;
  AnswerWatch answers_;  // pulls and pushes each table shard owes
};

}  // namespace psgrad
