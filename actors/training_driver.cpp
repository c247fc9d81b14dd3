#include "actors/training_driver.hpp"

#include <algorithm>
#include <chrono>
#include <limits>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "caf/response_promise.hpp"
#include "caf/send.hpp"
#include "actors/error_text.hpp"

namespace psgrad {

namespace {

using Clock = std::chrono::steady_clock;

class TrainingDriver : public caf::event_based_actor {
 public:
  TrainingDriver(caf::actor_config& config, TrainingJob job, ParameterServerActor server,
                 std::vector<DataWorkerActor> workers, EvaluatorActor evaluator,
                 std::vector<std::string> names)
      : caf::event_based_actor(config),
        names_(std::move(names)),
        job_(std::move(job)),
        server_(std::move(server)),
        workers_(std::move(workers)),
        evaluator_(std::move(evaluator)),
        gradients_(workers_.size()) {
    summary_.mode = mode_name(job_.mode);
    summary_.gradients_per_worker.assign(workers_.size(), 0);
  }

  caf::behavior make_behavior() override {
    // A remote worker's process may die with our request pending: the down message fails the run at
    // once instead of waiting for the request timeout.
    for (auto& worker : workers_) monitor(worker);
    set_down_handler([this](caf::down_msg& down) {
      for (std::size_t k = 0; k < workers_.size(); ++k)
        if (workers_[k].address() == down.source)
          fail(fmt::format("{} is gone", worker_name(k)), down.reason);
    });
    return {
        [this](run_atom) {
          promise_ = make_response_promise();
          start_ = Clock::now();
          request(server_, job_.request_timeout, weights_atom::value)
              .then([this](Weights& weights) {
                current_ = std::move(weights);
                if (job_.mode == TrainingMode::sync) sync_iteration();
                else async_start();
              },
              [this](caf::error& error) { fail("parameter server", error); });
        },
    };
  }

 private:
  // -- synchronous: every worker computes from the same weights, one step from their sum ----------
  void sync_iteration() {
    if (iteration_ == job_.iterations) return finish();
    pending_ = workers_.size();
    for (std::size_t k = 0; k < workers_.size(); ++k) {
      request(workers_[k], job_.request_timeout, compute_atom::value, current_)
          .then([this, k](Gradients& gradients) {
                  gradients_[k] = std::move(gradients);
                  if (--pending_ == 0) sync_apply();
                },
                [this, k](caf::error& error) { fail(worker_name(k), error); });
    }
  }

  void sync_apply() {
    for (std::size_t k = 0; k < workers_.size(); ++k) {
      summary_.samples += gradients_[k].samples;
      record_loss(gradients_[k].loss);
      ++summary_.gradients_per_worker[k];
    }
    request(server_, job_.request_timeout, apply_atom::value, gradients_)
        .then([this](Weights& weights) {
                current_ = std::move(weights);
                for (auto& gradients : gradients_) gradients.values = FloatBuffer();
                ++summary_.steps;
                record_staleness(0);
                maybe_evaluate(iteration_);
                ++iteration_;
                sync_iteration();
              },
              [this](caf::error& error) { fail("parameter server", error); });
  }

  // -- asynchronous: each gradient is applied when it arrives; its worker gets the newest weights --
  void async_start() {
    total_steps_ = job_.iterations * workers_.size();
    for (std::size_t k = 0; k < workers_.size() && issued_ < total_steps_; ++k) async_issue(k);
    if (total_steps_ == 0) finish();
  }

  void async_issue(std::size_t k) {
    ++issued_;
    request(workers_[k], job_.request_timeout, compute_atom::value, current_)
        .then([this, k](Gradients& gradients) { async_apply(k, std::move(gradients)); },
              [this, k](caf::error& error) { fail(worker_name(k), error); });
  }

  void async_apply(std::size_t k, Gradients gradients) {
    summary_.samples += gradients.samples;
    record_loss(gradients.loss);
    ++summary_.gradients_per_worker[k];
    const auto computed_from = gradients.version;
    request(server_, job_.request_timeout, apply_atom::value, std::move(gradients))
        .then([this, k, computed_from](Weights& weights) {
                // The server was at weights.version - 1 when it applied this gradient.
                record_staleness(static_cast<double>(weights.version - 1 - computed_from));
                current_ = std::move(weights);
                const auto step = summary_.steps++;
                maybe_evaluate(step);
                if (issued_ < total_steps_) async_issue(k);
                if (summary_.steps == total_steps_) finish();
              },
              [this](caf::error& error) { fail("parameter server", error); });
  }

  // -- shared ----------------------------------------------------------------------------------------
  void record_staleness(double staleness) {
    summary_.staleness_min = summary_.steps == 1 ? staleness : std::min(summary_.staleness_min, staleness);
    summary_.staleness_max = std::max(summary_.staleness_max, staleness);
    staleness_sum_ += staleness;
    summary_.staleness_mean = staleness_sum_ / static_cast<double>(summary_.steps);
  }

  void maybe_evaluate(std::uint64_t index) {
    // A plain send without a sender: the evaluator's report goes to its callback, not back here.
    if (job_.eval_frequency > 0 && index % job_.eval_frequency == 0)
      caf::anon_send(evaluator_, evaluate_atom::value, current_, progress(index, false));
  }

  TrainingProgress progress(std::uint64_t index, bool final) {
    TrainingProgress p;
    p.iteration = index;
    p.total_iterations = job_.mode == TrainingMode::sync ? job_.iterations : job_.iterations * workers_.size();
    p.samples = summary_.samples;
    p.wall_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    p.train_loss = loss_count_ ? loss_sum_ / static_cast<double>(loss_count_) : 0.0;
    loss_sum_ = 0.0;
    loss_count_ = 0;
    p.staleness_mean = summary_.staleness_mean;
    p.staleness_max = summary_.staleness_max;
    p.gradients_per_worker = summary_.gradients_per_worker;
    p.final = final;
    return p;
  }

  void record_loss(float loss) {
    loss_sum_ += loss;
    ++loss_count_;
  }

  void finish() {
    summary_.training_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    summary_.final_weights = current_;
    // Requests reach the evaluator after every snapshot sent before, so this report comes last.
    request(evaluator_, caf::infinite, evaluate_atom::value, current_, progress(summary_.steps, true))
        .then([this](EvaluationReport& report) {
                summary_.final_accuracy = report.accuracy;
                summary_.wall_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
                promise_.deliver(summary_);
                quit();
              },
              [this](caf::error& error) { fail("evaluator", error); });
  }

  std::string worker_name(std::size_t k) const {
    return k < names_.size() && !names_[k].empty() ? fmt::format("worker {} ({})", k, names_[k])
                                                   : fmt::format("worker {}", k);
  }

  void fail(const std::string& who, const caf::error& error) {
    if (failed_) return;
    failed_ = true;
    promise_.deliver(caf::make_error(caf::sec::runtime_error,
                                     fmt::format("{}: {}", who, error_text(system(), error))));
    quit();
  }

  std::vector<std::string> names_;
  TrainingJob job_;
  ParameterServerActor server_;
  std::vector<DataWorkerActor> workers_;
  EvaluatorActor evaluator_;
  caf::response_promise promise_;
  Weights current_;
  std::vector<Gradients> gradients_;
  std::size_t pending_ = 0;
  std::uint64_t iteration_ = 0;
  std::uint64_t issued_ = 0;
  std::uint64_t total_steps_ = 0;
  double staleness_sum_ = 0.0;
  double loss_sum_ = 0.0;
  std::uint64_t loss_count_ = 0;
  bool failed_ = false;
  Clock::time_point start_;
  TrainingSummary summary_;
};

}  // namespace

caf::actor spawn_training_driver(caf::actor_system& system, const TrainingJob& job,
                                 ParameterServerActor server, std::vector<DataWorkerActor> workers,
                                 EvaluatorActor evaluator, std::vector<std::string> names) {
  return system.spawn<TrainingDriver>(job, std::move(server), std::move(workers), std::move(evaluator),
                                      std::move(names));
}

}  // namespace psgrad
