// What one worker computes with: its model copy (or one borrowed per gradient), its own shuffled stream
// (of dense examples, or of examples with id fields for a model with tables), its dropout generator and
// the buffers its gradients are sent from. The push/pull loop around it is DataWorker's.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "caf/error.hpp"
#include "caf/expected.hpp"
#include "actors/data_worker.hpp"
#include "actors/gradient_outbox.hpp"
#include "actors/worker_rows.hpp"
#include "model/minibatcher.hpp"
#include "model/model.hpp"
#include "model/random.hpp"
#include "model/sparse_batcher.hpp"
#include "model/sparse_model.hpp"

namespace psgrad {

class WorkerGradients {
 public:
  // `model` is null when the worker borrows one per gradient (setup.workspaces) or has tables
  // (`table_model`, with `table_train`); `layout` is its model's dense parameters' either way.
  WorkerGradients(const DataWorkerSetup& setup, ParameterLayout layout, std::shared_ptr<Model> model,
                  std::optional<SparseModel> table_model, std::shared_ptr<const SparseDataset> table_train);

  bool has_tables() const { return table_model_.has_value(); }
  std::string who() const;

  // Why these weights cannot be computed from, or nothing: a payload refused on arrival, or another layout;
  // and that reason as the error that ends the loop (a refused payload drops the worker, not the run).
  std::string check(const Weights& weights) const;
  caf::error error_for(const Weights& weights, const std::string& reason) const;

  // Without tables: the gradient of the next batch (prefetched or not). `in_place`: computed in the shared
  // memory slot it is sent from; `whole`: sent to one server. Takes the weights by reference into the
  // message so it can let go of them before answering: a server that finds nobody else holding its
  // weights then steps in place.
  caf::expected<Gradients> from_next_batch(Weights& weights, bool in_place, bool whole);
  // Gathers the next batch, unless it holds one, while the gradient just sent is on its way (without tables).
  void prefetch();

  // With tables: the next batch, its lookup and the pulls of its rows of `version`.
  WorkerRows::StepHandle pull_next(WorkerRows& rows, std::uint64_t version);
  // With tables: the gradient of a step whose rows are in, and its rows' gradients.
  caf::expected<Gradients> from_rows(Weights& weights, const WorkerRows::Step& step, const WorkerRows& rows,
                                     std::int64_t received, bool in_place, bool whole,
                                     std::vector<SparseRows>& row_gradients);

  // From now on the worker waits for an answer (the timings sent with each gradient).
  void mark_idle();
  // Where its stream and dropout generator stand; a batch taken ahead (prefetched, or a step of tables
  // whose rows were pulled ahead) is not used yet, so a resumed stream serves it again.
  WorkerStreamState state(const WorkerRows::Step* pulled_ahead) const;

 private:
  Gradients header(std::uint64_t version, std::size_t samples) const;
  // The worker's simulated slowness (cluster.worker_delay_ms), then when it received, started and answered.
  void seal_timing(Gradients& gradients, std::int64_t received);

  std::size_t worker_index_;
  std::chrono::milliseconds delay_;
  std::shared_ptr<ModelWorkspaces> workspaces_;
  ParameterLayout layout_;
  std::shared_ptr<Model> model_;  // its own; null when it borrows one per gradient, or has tables
  std::optional<Minibatcher> batches_;  // without tables
  std::optional<Minibatcher::Batch> next_batch_;  // gathered ahead, not yet used
  Minibatcher::Position position_before_next_;
  std::optional<SparseModel> table_model_;     // with tables
  std::optional<SparseBatcher> table_batches_;  // with tables
  Random dropout_rng_;
  GradientOutbox outbox_;
  std::int64_t previous_answered_ = 0;
  std::int64_t idle_since_ = 0;
};

}  // namespace psgrad
