#include "actors/evaluator.hpp"

#include <algorithm>
#include <deque>
#include <type_traits>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/result.hpp"
#include "caf/sec.hpp"
#include "model/early_stopping.hpp"
#include "runtime/steady_time.hpp"

namespace psgrad {

namespace {

// The waiting evaluations' weights kept at most (at least 4 evaluations): 256 MiB.
constexpr std::size_t kWaitingWeightBytes = std::size_t{256} << 20;

class Evaluator : public EvaluatorBase {
 public:
  // `model` is null when the model has tables (`rows`).
  Evaluator(caf::actor_config& config, const TrainingJob& job, EvaluatorSetup setup, std::shared_ptr<Model> model,
            std::optional<EvaluationRows> rows)
      : EvaluatorBase(config),
        setup_(std::move(setup)),
        batch_size_(job.evaluation.batch_size),
        model_(std::move(model)),
        rows_(std::move(rows)) {
    // The shards keep the rows of the best evaluation; BestWeights keeps its dense weights by the same rule.
    if (rows_ && job.training.save_best) best_so_far_.emplace(0);
  }

  behavior_type make_behavior() override {
    return {
        [this](evaluate_atom, Weights& weights, TrainingProgress& progress) -> caf::result<EvaluationReport> {
          const auto& layout = rows_ ? rows_->model().dense().layout() : model_->layout();
          if (const auto differs = layout.mismatch(weights.layout_hash, weights.values.size()))
            return caf::make_error(caf::sec::invalid_argument,
                                   fmt::format("evaluator: weights do not fit the model layout ({})", *differs));
          auto promise = make_response_promise<EvaluationReport>();
          const bool awaited = promise.pending();
          queue_.push_back(Pending{std::move(weights), std::move(progress), promise, awaited});
          bound_waiting();
          // Scored after the evaluations already in the mailbox have joined the queue, so a backlog is seen.
          if (!busy_) {
            busy_ = true;
            send(this, evaluator_next_atom::value);
          }
          return promise;
        },
        [this](evaluator_next_atom) { start(); },
    };
  }

 private:
  struct Pending {
    Weights weights;
    TrainingProgress progress;
    caf::typed_response_promise<EvaluationReport> promise;
    bool awaited = false;  // a request: its asker waits for the report
  };

  // Skips the oldest waiting periodic evaluation while more than the bound wait (the front one, being
  // scored, does not count).
  void bound_waiting() {
    if (rows_ && rows_->holds_steps()) return;
    const auto bytes = std::max<std::size_t>(queue_.back().weights.values.size() * sizeof(float), 1);
    const std::size_t bound = std::max<std::size_t>(4, kWaitingWeightBytes / bytes);
    std::size_t skippable = 0;
    for (std::size_t i = 1; i < queue_.size(); ++i) skippable += queue_[i].awaited ? 0 : 1;
    if (queue_.size() - 1 <= bound || skippable == 0) return;
    for (std::size_t i = 1; i < queue_.size(); ++i) {
      if (queue_[i].awaited) continue;
      if (skipped_++ == 0 && setup_.on_event)
        setup_.on_event(fmt::format("the evaluator is {} evaluations behind: evaluations are skipped until it catches "
                                    "up (step {} is the first; raise evaluation.frequency to evaluate less often)",
                                    queue_.size() - 1, queue_[i].progress.iteration));
      queue_.erase(queue_.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
  }

  // One evaluation at a time, so reports keep their order: the one at the front of the queue.
  void start() {
    if (queue_.empty()) {
      busy_ = false;
      return;
    }
    auto& pending = queue_.front();
    const auto started = steady_now_ns();
    if (!rows_) {
      const auto& dev = *setup_.dev;
      const auto n = static_cast<Eigen::Index>(dev.count);
      return report(started, model_->evaluate(pending.weights.values.data(),
                                              ConstMatrixMap(dev.input_data(), n, static_cast<Eigen::Index>(dev.width)),
                                              ConstMatrixMap(dev.targets.data(), n, static_cast<Eigen::Index>(dev.num_classes)),
                                              batch_size_));
    }
    rows_->pull(this, pending.weights.version, [this, started](Result<std::vector<SparseRows>> rows) {
      if (!rows) {
        queue_.front().promise.deliver(caf::make_error(caf::sec::runtime_error, "evaluator: " + rows.error()));
        return finished();
      }
      const auto& targets = rows_->targets();
      report(started, rows_->model().evaluate(queue_.front().weights.values.data(), rows_->lookup(), *rows,
                                              ConstMatrixMap(targets.data(), targets.rows(), targets.cols()),
                                              batch_size_));
    });
  }

  void report(std::int64_t started, const Evaluation& result) {
    auto& pending = queue_.front();
    if (setup_.trace)
      setup_.trace->add(
          TraceSpan{0, "server", "evaluator", "evaluate", started, steady_now_ns(), pending.progress.iteration});
    EvaluationReport report{pending.progress.iteration, pending.weights.version, result.accuracy, result.loss,
                            pending.progress.final, pending.progress};
    if (pending.progress.final && skipped_ > 0 && setup_.on_event)
      setup_.on_event(fmt::format("{} evaluations were skipped while the evaluator was behind", skipped_));
    if (best_so_far_) {
      const auto version = pending.weights.version;
      const bool best = report.final ? best_so_far_->record_final(version, report.accuracy)
                                     : best_so_far_->record(version, report.accuracy);
      rows_->tell_scored(this, version, best);
    }
    if (setup_.on_snapshot) setup_.on_snapshot(report, pending.weights);
    if (setup_.on_report) setup_.on_report(report);
    pending.promise.deliver(std::move(report));
    finished();
  }

  // The evaluation at the front of the queue is answered: the next one starts, once the evaluations that
  // arrived meanwhile are in the queue.
  void finished() {
    queue_.pop_front();
    if (queue_.empty()) {
      busy_ = false;
      return;
    }
    send(this, evaluator_next_atom::value);
  }

  void on_exit() override {
    queue_.clear();
    if (rows_) rows_->release();
  }

  EvaluatorSetup setup_;
  std::size_t batch_size_;
  std::shared_ptr<Model> model_;
  std::optional<EvaluationRows> rows_;
  std::optional<EarlyStopping> best_so_far_;  // training.save_best with tables
  std::deque<Pending> queue_;
  bool busy_ = false;        // an evaluation is being scored, or about to be
  std::uint64_t skipped_ = 0;  // evaluations skipped while it was behind
};

}  // namespace

Result<EvaluatorActor> spawn_evaluator(caf::actor_system& system, const TrainingJob& job, EvaluatorSetup setup) {
  std::shared_ptr<Model> model;
  std::optional<EvaluationRows> rows;
  if (setup.tables) {
    auto made = EvaluationRows::make(job, std::move(*setup.tables));
    if (!made) return Error{made.error()};
    rows.emplace(std::move(made).value());
    setup.tables.reset();
  } else {
    if (!setup.dev || setup.dev->count == 0) return Error{"no dev data to evaluate on"};
    auto built = build_model(job, setup.dev->width, setup.dev->num_classes);
    if (!built) return Error{built.error()};
    model = std::make_shared<Model>(std::move(built).value());
  }
  const auto thread = setup.thread;
  // CAF takes spawn options only as a template argument.
  auto spawn = [&](auto options) -> EvaluatorActor {
    return system.spawn<Evaluator, decltype(options)::value>(job, std::move(setup), std::move(model), std::move(rows));
  };
  if (thread == EvaluatorThread::scheduler)
    return spawn(std::integral_constant<caf::spawn_options, caf::no_spawn_options>{});
  return spawn(std::integral_constant<caf::spawn_options, caf::detached>{});
}

}  // namespace psgrad
