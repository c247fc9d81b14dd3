// The dev set's rows for an evaluation of a model with embedding tables: pulled from the table shards at
// the snapshot's version (sync: the rows of the same step; async: the rows as they are), in parts of a
// bounded number of keys (pull_parts.hpp); async at version 0, made from the seed instead.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "caf/atom.hpp"
#include "caf/typed_event_based_actor.hpp"
#include "actors/interfaces.hpp"
#include "actors/pull_parts.hpp"
#include "actors/sparse_interfaces.hpp"
#include "actors/training_job.hpp"
#include "model/embedding_table.hpp"
#include "model/sparse_batcher.hpp"
#include "model/sparse_model.hpp"

namespace psgrad {

// What an evaluator of a model with tables needs beyond the job: its dev examples, the table shards, and
// how it pulls: the dev set's keys in parts of at most keys_per_part keys; shards on this host (per
// shard, or none) answer their rows through shared memory (payloads/shared_rows.hpp).
struct EvaluatorTables {
  std::shared_ptr<const SparseDataset> dev;
  std::vector<EmbeddingShardActor> shards;
  std::size_t keys_per_part = kKeysPerPullPart;
  std::vector<bool> shards_on_this_host;
};

// To itself: score the next evaluation waiting, once the evaluations that arrived before are in its queue.
using evaluator_next_atom = caf::atom_constant<caf::atom("evalnext")>;
using EvaluatorSelf = EvaluatorActor::extend<caf::reacts_to<evaluator_next_atom>>;
using EvaluatorBase = EvaluatorSelf::base;

class EvaluationRows {
 public:
  // The rows per field, or why there are none (naming the shard).
  using OnRows = std::function<void(Result<std::vector<SparseRows>>)>;

  // Fails when the model cannot be built for the dev set or its keys cannot be looked up.
  static Result<EvaluationRows> make(const TrainingJob& job, EvaluatorTables tables);

  // Pulls the rows of `version`; on_rows once every part is in, or at the first failure. Not awaited:
  // CAF 0.17 skips every other message while an actor awaits, exit messages too, and a shard process
  // whose connection dropped never answers, so an awaiting evaluator could never be stopped.
  void pull(EvaluatorBase* self, std::uint64_t version, OnRows on_rows);

  // training.save_best: tells every shard that the evaluation of `version` is scored, and whether it is the
  // best so far (the shard then keeps its rows; a sync shard holds that step until told).
  void tell_scored(EvaluatorBase* self, std::uint64_t version, bool best) const;

  // Sync: a table shard holds each evaluation's step until its rows are pulled, so none may be skipped.
  bool holds_steps() const { return seed_tables_.empty(); }
  SparseModel& model() { return model_; }
  const BatchLookup& lookup() const { return lookup_; }
  const Matrix& targets() const { return dev_.targets; }
  // The shards' handles would keep them alive: let go.
  void release() { tables_.shards.clear(); }

 private:
  EvaluationRows(SparseModel model, SparseBatch dev, BatchLookup lookup, EvaluatorTables tables,
                 std::vector<EmbeddingTable> seed_tables);
  std::vector<SparseRows> seed_rows() const;

  SparseModel model_;
  SparseBatch dev_;     // the whole dev set in one piece
  BatchLookup lookup_;  // its keys, the same for every evaluation
  EvaluatorTables tables_;
  // Async: per field, a table that makes rows as the seed does (empty: sync, where a shard holds the
  // evaluation's step until the evaluator has pulled it).
  std::vector<EmbeddingTable> seed_tables_;
};

}  // namespace psgrad
