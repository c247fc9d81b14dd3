#include "actors/sparse_evaluator.hpp"

#include <deque>
#include <memory>
#include <type_traits>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/sec.hpp"
#include "actors/pull_parts.hpp"
#include "actors/row_router.hpp"
#include "actors/sparse_parts.hpp"
#include "model/embedding_table.hpp"
#include "model/sparse_batcher.hpp"
#include "model/sparse_model.hpp"
#include "runtime/error_text.hpp"

namespace psgrad {

namespace {

class SparseEvaluator : public EvaluatorActor::base {
 public:
  SparseEvaluator(caf::actor_config& config, SparseModel model, SparseBatch dev, BatchLookup lookup,
                  std::vector<EmbeddingShardActor> shards, std::size_t batch_size, SparseEvaluatorPlacement placement,
                  std::vector<EmbeddingTable> seed_tables, ReportCallback on_report, SnapshotCallback on_snapshot)
      : EvaluatorActor::base(config),
        model_(std::move(model)),
        dev_(std::move(dev)),
        lookup_(std::move(lookup)),
        shards_(std::move(shards)),
        batch_size_(batch_size),
        keys_per_part_(placement.keys_per_part),
        shards_on_this_host_(std::move(placement.shards_on_this_host)),
        seed_tables_(std::move(seed_tables)),
        on_report_(std::move(on_report)),
        on_snapshot_(std::move(on_snapshot)) {}

  behavior_type make_behavior() override {
    return {
        [this](evaluate_atom, Weights& weights, TrainingProgress& progress) -> caf::result<EvaluationReport> {
          if (const auto differs = model_.dense().layout().mismatch(weights.layout_hash, weights.values.size()))
            return caf::make_error(caf::sec::invalid_argument,
                                   fmt::format("evaluator: weights do not fit the model layout ({})", *differs));
          auto promise = make_response_promise<EvaluationReport>();
          queue_.push_back(std::make_shared<Pending>(Pending{std::move(weights), std::move(progress), promise,
                                                             std::vector<std::vector<PulledRows>>(shards_.size()),
                                                             0, false}));
          if (queue_.size() == 1) start(queue_.front());
          return promise;
        },
    };
  }

 private:
  struct Pending {
    Weights weights;
    TrainingProgress progress;
    caf::typed_response_promise<EvaluationReport> promise;
    std::vector<std::vector<PulledRows>> answers;  // per shard, per part of its pull
    std::size_t missing = 0;                        // parts still to be answered
    bool done = false;                              // answered, with a report or an error
  };

  // One evaluation at a time, so reports keep their order. Its pulls are not awaited: CAF 0.17 skips every
  // other message while an actor awaits, exit messages too, and a shard process whose connection dropped
  // never answers, so an awaiting evaluator could never be stopped and its process never exit.
  void start(const std::shared_ptr<Pending>& pending) {
    // Async, version 0: every row is still the one the seed makes, so the evaluator makes them itself
    // instead of pulling the whole dev set from the shards just as the workers ask for their first rows.
    if (!seed_tables_.empty() && pending->weights.version == 0) return score(*pending, seed_rows());
    // Every shard is asked, those holding none of the dev set's keys too: a sync shard holds the
    // step from an evaluation point back until the evaluator has pulled at that version. The dev
    // set's keys go in parts (pull_parts.hpp), so no answer is too big to cross a connection at once.
    const auto pulls = split_pull(lookup_, shards_.size(), pending->weights.version, true);
    std::vector<std::vector<RowPull>> parts;
    for (std::size_t s = 0; s < shards_.size(); ++s) {
      parts.push_back(cut_pull(pulls[s], keys_per_part_));
      if (s < shards_on_this_host_.size() && shards_on_this_host_[s])
        for (auto& part : parts.back()) part.answer_through_shared_memory = true;
      pending->answers[s].resize(parts.back().size());
      pending->missing += parts.back().size();
    }
    for (std::size_t s = 0; s < shards_.size(); ++s) {
      for (std::size_t p = 0; p < parts[s].size(); ++p) {
        request(shards_[s], caf::infinite, pull_atom::value, std::move(parts[s][p]))
            .then(
                [this, pending, s, p](PulledRows& rows) {
                  if (pending->done) return;
                  if (!rows.refusal.empty()) return fail(*pending, s, rows.refusal);
                  pending->answers[s][p] = std::move(rows);
                  if (--pending->missing == 0) report(*pending);
                },
                [this, pending, s](caf::error& error) {
                  if (!pending->done) fail(*pending, s, error_text(system(), error));
                });
      }
    }
  }

  // The evaluation at the front of the queue is answered: the next one starts.
  void finished(Pending& pending) {
    pending.done = true;
    queue_.pop_front();
    if (!queue_.empty()) start(queue_.front());
  }

  void on_exit() override {
    queue_.clear();
    shards_.clear();
  }

  void fail(Pending& pending, std::size_t shard, const std::string& why) {
    pending.promise.deliver(
        caf::make_error(caf::sec::runtime_error, fmt::format("evaluator: table shard {}: {}", shard, why)));
    finished(pending);
  }

  void report(Pending& pending) {
    std::vector<PulledRows> answers;
    for (std::size_t s = 0; s < pending.answers.size(); ++s) {
      auto joined = join_pull_answers(std::move(pending.answers[s]));
      if (!joined) return fail(pending, s, joined.error());
      answers.push_back(std::move(joined).value());
    }
    auto rows = join_pulled(lookup_, model_.fields(), answers);
    if (!rows) {
      pending.promise.deliver(caf::make_error(caf::sec::invalid_argument, "evaluator: " + rows.error()));
      return finished(pending);
    }
    score(pending, *rows);
  }

  // The dev set's rows as the seed makes them, per field.
  std::vector<SparseRows> seed_rows() const {
    std::vector<SparseRows> rows;
    for (std::size_t f = 0; f < seed_tables_.size(); ++f) {
      SparseRows field(lookup_.fields[f].keys, seed_tables_[f].width());
      for (std::size_t i = 0; i < field.size(); ++i) seed_tables_[f].initial_row(field.keys[i], field.row(i));
      rows.push_back(std::move(field));
    }
    return rows;
  }

  void score(Pending& pending, const std::vector<SparseRows>& rows) {
    const auto& targets = dev_.targets;
    const auto result = model_.evaluate(pending.weights.values.data(), lookup_, rows,
                                        ConstMatrixMap(targets.data(), targets.rows(), targets.cols()), batch_size_);
    EvaluationReport report{pending.progress.iteration, pending.weights.version, result.accuracy, result.loss,
                            pending.progress.final, pending.progress};
    if (on_snapshot_) on_snapshot_(report, pending.weights);
    if (on_report_) on_report_(report);
    pending.promise.deliver(std::move(report));
    finished(pending);
  }

  SparseModel model_;
  SparseBatch dev_;     // the whole dev set in one piece
  BatchLookup lookup_;  // its keys, the same for every evaluation
  std::vector<EmbeddingShardActor> shards_;
  std::deque<std::shared_ptr<Pending>> queue_;  // the evaluation being pulled for first
  std::size_t batch_size_;
  std::size_t keys_per_part_;
  std::vector<bool> shards_on_this_host_;  // they answer through shared memory
  // Async: per field, a table that makes rows as the seed does (empty: sync, where a shard holds the
  // evaluation's step until the evaluator has pulled it).
  std::vector<EmbeddingTable> seed_tables_;
  ReportCallback on_report_;
  SnapshotCallback on_snapshot_;
};

}  // namespace

Result<EvaluatorActor> spawn_sparse_evaluator(caf::actor_system& system, const TrainingJob& job,
                                              std::shared_ptr<const SparseDataset> dev,
                                              std::vector<EmbeddingShardActor> shards, ReportCallback on_report,
                                              SnapshotCallback on_snapshot, SparseEvaluatorPlacement placement) {
  if (!dev || dev->count == 0) return Error{"no dev data to evaluate on"};
  auto model = SparseModel::build_for_data(job.model, *dev, "dev data");
  if (!model) return Error{model.error()};
  auto batch = gather_examples(*dev, {}, 0, dev->count);
  auto lookup = model->look_up(batch.fields, batch.numbers);
  if (!lookup) return Error{"dev data: " + lookup.error()};
  std::vector<EmbeddingTable> seed_tables;
  if (job.cluster.mode != TrainingMode::sync)
    for (const auto& settings : seeded_table_settings(job, *model)) seed_tables.emplace_back(settings);
  // CAF takes spawn options only as a template argument.
  auto spawn = [&](auto options) -> EvaluatorActor {
    return system.spawn<SparseEvaluator, decltype(options)::value>(
        std::move(model).value(), std::move(batch), std::move(lookup).value(), std::move(shards),
        job.evaluation.batch_size, placement, std::move(seed_tables), std::move(on_report), std::move(on_snapshot));
  };
  if (placement.thread == EvaluatorThread::scheduler)
    return spawn(std::integral_constant<caf::spawn_options, caf::no_spawn_options>{});
  return spawn(std::integral_constant<caf::spawn_options, caf::detached>{});
}

}  // namespace psgrad
