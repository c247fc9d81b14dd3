// The training driver actor. Over 350 lines for a reason: its handlers (the sync schedule, the
// async/ssp schedule, lost and joining workers, checkpoints, the end of a run) share one state; the
// parts that stand alone live in worker_slots.hpp, run_statistics.hpp, server_group.hpp and countdown.hpp.
#include "actors/training_driver.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/countdown.hpp"
#include "actors/error_text.hpp"
#include "actors/run_statistics.hpp"
#include "actors/server_group.hpp"
#include "actors/worker_slots.hpp"

namespace psgrad {

namespace {

using Clock = std::chrono::steady_clock;

class TrainingDriver : public TrainingDriverActor::base {
 public:
  TrainingDriver(caf::actor_config& config, TrainingJob job, std::vector<ParameterServerActor> servers,
                 std::vector<DataWorkerActor> workers, EvaluatorActor evaluator, DriverHooks hooks)
      : TrainingDriverActor::base(config),
        job_(std::move(job)),
        servers_(std::move(servers)),
        evaluator_(std::move(evaluator)),
        hooks_(std::move(hooks)) {
    for (std::size_t k = 0; k < workers.size(); ++k) add_slot(k, std::move(workers[k]), name_from_hooks(k));
    summary_.mode = job_.mode;
    iteration_ = hooks_.start_iteration;
    summary_.steps = job_.mode != TrainingMode::sync ? hooks_.start_iteration : 0;
    total_steps_ = job_.iterations * std::max<std::size_t>(1, job_.num_workers);
  }

  behavior_type make_behavior() override {
    // A remote worker's process may die with our request pending: the down message drops it at once
    // instead of waiting for the request timeout.
    set_down_handler([this](caf::down_msg& down) {
      for (std::size_t k = 0; k < slots_.size(); ++k)
        if (slots_[k].handle.address() == down.source) lose(k, down_reason(down.reason));
    });
    return idle();
  }

 private:
  // -- phases (see the diagram in training_driver.hpp) ----------------------------------------------
  behavior_type idle() {
    return {
        [this](run_atom) -> caf::result<TrainingSummary> {
          promise_ = make_response_promise<TrainingSummary>();
          start_ = Clock::now();
          become(training());
          servers_.request(
              this, job_.request_timeout,
              [this](Weights weights) {
                current_ = std::move(weights);
                if (job_.mode == TrainingMode::sync) sync_iteration();
                else async_start();
              },
              failure_handler(), weights_atom::value);
          return promise_;
        },
        [this](add_worker_atom, DataWorkerActor& worker, const std::string& host, std::uint32_t index) {
          add_slot(index, std::move(worker), host);
        },
        [](rejoin_atom, std::uint64_t) {},
    };
  }

  behavior_type training() {
    return {
        [](run_atom) -> caf::result<TrainingSummary> {
          return caf::make_error(caf::sec::invalid_argument, "this training run is already under way");
        },
        [this](add_worker_atom, DataWorkerActor& worker, const std::string& host, std::uint32_t index) {
          add_slot(index, std::move(worker), host);
          event(fmt::format("{} takes part from the next step", worker_name(index)));
          if (waiting_for_workers_) {
            waiting_for_workers_ = false;
            if (job_.mode == TrainingMode::sync) sync_iteration();
            else issue_idle_workers();
          } else if (job_.mode != TrainingMode::sync && started_async_) {
            issue_idle_workers();
          }
        },
        [this](rejoin_atom, std::uint64_t wait_round) {
          if (waiting_for_workers_ && wait_round == wait_round_)
            fail("training", caf::make_error(caf::sec::runtime_error,
                                             fmt::format("every worker was lost and none joined within {} ms",
                                                         job_.rejoin_timeout.count())));
        },
    };
  }

  // Training is over (the final evaluation, the workers being stopped): a late joiner is told to stop.
  behavior_type ending() {
    return {
        [](run_atom) -> caf::result<TrainingSummary> {
          return caf::make_error(caf::sec::invalid_argument, "this training run has ended");
        },
        [this](add_worker_atom, DataWorkerActor& worker, const std::string&, std::uint32_t) {
          request(worker, std::chrono::seconds(5), stop_atom::value).then([](bool) {}, [](caf::error&) {});
        },
        [](rejoin_atom, std::uint64_t) {},
    };
  }

  std::function<void(const std::string&, const caf::error&)> failure_handler() {
    return [this](const std::string& who, const caf::error& error) { fail(who, error); };
  }

  // -- workers -----------------------------------------------------------------------------------
  std::string name_from_hooks(std::size_t k) const {
    return k < hooks_.worker_names.size() ? hooks_.worker_names[k] : std::string();
  }

  void add_slot(std::size_t k, DataWorkerActor handle, std::string name) {
    monitor(handle);
    slots_.add(k, std::move(handle), std::move(name));
    if (gradients_.size() < slots_.size()) gradients_.resize(slots_.size());
    if (summary_.gradients_per_worker.size() < slots_.size()) summary_.gradients_per_worker.resize(slots_.size(), 0);
  }

  std::size_t alive_count() const { return slots_.alive_count(); }
  std::uint64_t min_clock() const { return slots_.min_clock(); }

  // async: any idle worker may start; ssp: only one whose clock is within the bound of the slowest.
  bool may_start(std::size_t k) const {
    return job_.mode != TrainingMode::ssp || slots_[k].clock <= min_clock() + job_.staleness;
  }

  int interrupted_by() const { return hooks_.interrupt ? hooks_.interrupt->load() : 0; }

  void issue_idle_workers() {
    if (interrupted_by() != 0) return;
    for (std::size_t k = 0; k < slots_.size() && issued_ < total_steps_; ++k)
      if (slots_[k].alive && !slots_[k].busy && may_start(k)) async_issue(k);
  }

  std::string worker_name(std::size_t k) const { return slots_.name(k); }

  void lose(std::size_t k, const std::string& reason) {
    auto& slot = slots_[k];
    if (!slot.alive || finished_) return;
    slot.alive = false;
    ++slot.round;  // whatever it still answers is ignored
    event(fmt::format("{} lost: {}; continuing with {} worker(s)", worker_name(k), reason, alive_count()));
    const bool was_busy = slot.busy;
    slot.busy = false;
    if (job_.mode == TrainingMode::sync) {
      gradients_[k] = Gradients{};
      if (was_busy && --pending_ == 0) return sync_apply();
    } else if (was_busy && !slot.applying) {
      --issued_;  // its step is taken over by whoever answers next
    }
    slot.applying = false;
    // The slowest may have been the lost one: workers waiting on it can go on (ssp).
    if (job_.mode != TrainingMode::sync && started_async_ && alive_count() > 0) issue_idle_workers();
    if (alive_count() == 0) all_lost();
  }

  std::string down_reason(const caf::error& reason) {
    if (reason == caf::exit_reason::remote_link_unreachable)
      return "its connection dropped (the process died, froze or lost the network)";
    return reason ? error_text(system(), reason) : std::string("it stopped");
  }

  void worker_failed(std::size_t k, std::uint64_t round, const caf::error& error) {
    if (round != slots_[k].round) return;
    lose(k, error == caf::sec::request_timeout
                ? fmt::format("no answer within {} ms", job_.request_timeout.count())
                : error_text(system(), error));
  }

  void all_lost() {
    if (waiting_for_workers_ || failed_) return;
    waiting_for_workers_ = true;
    auto next = [this] {
      if (!job_.elastic || job_.rejoin_timeout.count() == 0)
        return fail("training", caf::make_error(caf::sec::runtime_error, "every worker was lost"));
      event(fmt::format("every worker was lost; waiting {} ms for a worker to join", job_.rejoin_timeout.count()));
      delayed_send(this, job_.rejoin_timeout, rejoin_atom::value, ++wait_round_);
    };
    // Nothing is lost: the server's state goes to disk before we wait or give up.
    if (checkpoints_enabled()) take_checkpoint(next);
    else next();
  }

  // -- synchronous: every worker computes from the same weights, one step from their sum ----------
  void sync_iteration() {
    if (iteration_ >= job_.iterations || interrupted_by() != 0) return finish();
    if (alive_count() == 0) return all_lost();
    pending_ = 0;
    for (std::size_t k = 0; k < slots_.size(); ++k) {
      auto& slot = slots_[k];
      if (!slot.alive) continue;
      ++pending_;
      slot.busy = true;
      const auto round = ++slot.round;
      request(slot.handle, job_.request_timeout, compute_atom::value, current_)
          .then(
              [this, k, round](Gradients& gradients) {
                if (round != slots_[k].round) return;
                slots_[k].busy = false;
                gradients_[k] = std::move(gradients);
                if (--pending_ == 0) sync_apply();
              },
              [this, k, round](caf::error& error) { worker_failed(k, round, error); });
    }
  }

  void sync_apply() {
    // In worker order, so that the sum (and the run) is deterministic.
    std::vector<Gradients> received;
    for (std::size_t k = 0; k < gradients_.size(); ++k) {
      if (gradients_[k].values.empty()) continue;
      summary_.samples += gradients_[k].samples;
      statistics_.record_loss(gradients_[k].loss);
      ++summary_.gradients_per_worker[k];
      received.push_back(std::move(gradients_[k]));
      gradients_[k] = Gradients{};
    }
    if (received.empty()) return all_lost();
    // Every worker has let go of these weights; dropping ours lets the server step in place.
    current_ = Weights{};
    servers_.request(
        this, job_.request_timeout,
        [this](Weights weights) {
          current_ = std::move(weights);
          ++summary_.steps;
          statistics_.record_staleness(0, summary_);
          maybe_evaluate(iteration_);
          ++iteration_;
          if (checkpoint_due(iteration_) && iteration_ < job_.iterations)
            take_checkpoint([this] { sync_iteration(); });
          else
            sync_iteration();
        },
        failure_handler(), apply_atom::value, std::move(received));
  }

  // -- asynchronous: each gradient is applied when it arrives; its worker gets the newest weights --
  void async_start() {
    started_async_ = true;
    issued_ = summary_.steps;
    issue_idle_workers();
    if (summary_.steps >= total_steps_) finish();
  }

  void async_issue(std::size_t k) {
    auto& slot = slots_[k];
    if (!slot.alive || slot.busy) return;
    ++issued_;
    slot.busy = true;
    summary_.max_clock_lead = std::max(summary_.max_clock_lead, slot.clock - min_clock());
    const auto round = ++slot.round;
    request(slot.handle, job_.request_timeout, compute_atom::value, current_)
        .then(
            [this, k, round](Gradients& gradients) {
              if (round != slots_[k].round) return;
              // Still busy until its gradient is applied: it then gets the weights that include it.
              slots_[k].applying = true;
              async_apply(k, std::move(gradients));
            },
            [this, k, round](caf::error& error) { worker_failed(k, round, error); });
  }

  void async_apply(std::size_t k, Gradients gradients) {
    summary_.samples += gradients.samples;
    statistics_.record_loss(gradients.loss);
    ++summary_.gradients_per_worker[k];
    const auto computed_from = gradients.version;
    servers_.request(
            this, job_.request_timeout,
            [this, k, computed_from](Weights weights) {
              // The server was at weights.version - 1 when it applied this gradient.
              statistics_.record_staleness(static_cast<double>(weights.version - 1 - computed_from), summary_);
              current_ = std::move(weights);
              slots_[k].busy = false;
              slots_[k].applying = false;
              ++slots_[k].clock;
              const auto step = summary_.steps++;
              maybe_evaluate(step);
              if (summary_.steps >= total_steps_) return finish();
              // Interrupted: no new requests; the run ends once the last gradient in flight is in.
              if (interrupted_by() != 0) {
                if (!slots_.any_busy()) finish();
                return;
              }
              if (checkpoint_due(summary_.steps)) take_checkpoint([] {});
              // This worker first (it gets the weights that include its gradient), then any idle
              // one: one lost earlier left its step to the others, or (ssp) waited on the slowest.
              if (issued_ < total_steps_ && may_start(k)) async_issue(k);
              issue_idle_workers();
            },
            failure_handler(), apply_atom::value, std::move(gradients));
  }

  // -- checkpoints -----------------------------------------------------------------------------------
  bool checkpoint_due(std::uint64_t done) const {
    return checkpoints_enabled() && job_.checkpoint_every > 0 && done % job_.checkpoint_every == 0;
  }

  bool checkpoints_enabled() const { return static_cast<bool>(hooks_.on_checkpoint); }

  // Collects the server's state and every live worker's stream position, hands them to the hook,
  // then continues with `then`. In sync mode the workers are idle here, so the positions are exact.
  void take_checkpoint(std::function<void()> then) {
    auto checkpoint = std::make_shared<TrainingCheckpoint>();
    checkpoint->iteration = job_.mode == TrainingMode::sync ? iteration_ : summary_.steps;
    const Countdown done(1 + alive_count(), [this, checkpoint, then] {
      std::sort(checkpoint->workers.begin(), checkpoint->workers.end(),
                [](const WorkerStreamState& a, const WorkerStreamState& b) { return a.worker < b.worker; });
      hooks_.on_checkpoint(*checkpoint);
      then();
    });
    servers_.request_state(
        this, job_.request_timeout,
        [checkpoint, done](ServerState state) {
          checkpoint->version = state.weights.version;
          checkpoint->layout_hash = state.weights.layout_hash;
          checkpoint->weights.assign(state.weights.values.data(), state.weights.values.data() + state.weights.values.size());
          checkpoint->optimizer = std::move(state.optimizer);
          done();
        },
        failure_handler());
    for (auto& slot : slots_) {
      if (!slot.alive) continue;
      request(slot.handle, job_.request_timeout, state_atom::value)
          .then(
              [checkpoint, done](WorkerStreamState& stream) {
                checkpoint->workers.push_back(stream);
                done();
              },
              [done](caf::error&) { done(); });  // a worker lost meanwhile restarts from its seed
    }
  }

  // -- shared ----------------------------------------------------------------------------------------
  TrainingProgress progress(std::uint64_t index, bool final) {
    TrainingProgress p;
    p.iteration = index;
    p.total_iterations = job_.mode == TrainingMode::sync ? job_.iterations : total_steps_;
    p.samples = summary_.samples;
    p.wall_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    p.train_loss = statistics_.take_mean_loss();
    p.staleness_mean = summary_.staleness_mean;
    p.staleness_max = summary_.staleness_max;
    p.gradients_per_worker = summary_.gradients_per_worker;
    p.final = final;
    return p;
  }

  void maybe_evaluate(std::uint64_t index) {
    // A plain send without a sender: the evaluator's report goes to its callback, not back here.
    if (job_.eval_frequency > 0 && index % job_.eval_frequency == 0)
      caf::anon_send(evaluator_, evaluate_atom::value, current_, progress(index, false));
  }

  void event(const std::string& line) {
    if (hooks_.on_event) hooks_.on_event(line);
  }

  void finish() {
    if (finished_) return;
    finished_ = true;
    summary_.interrupted_by = interrupted_by();
    summary_.training_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    summary_.final_weights = current_;
    auto evaluate_final = [this] {
      // Requests reach the evaluator after every snapshot sent before, so this report comes last.
      request(evaluator_, caf::infinite, evaluate_atom::value, current_, progress(final_index(), true))
          .then(
              [this](EvaluationReport& report) {
                summary_.final_accuracy = report.accuracy;
                summary_.wall_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
                stop_workers_then([this] {
                  promise_.deliver(summary_);
                  quit();
                });
              },
              [this](caf::error& error) { fail("evaluator", error); });
    };
    auto checkpoint_then_evaluate = [this, evaluate_final] {
      if (checkpoints_enabled()) take_checkpoint(evaluate_final);
      else evaluate_final();
    };
    // wire: workers got encoded (bf16) weights; the final evaluation and model are the fp32 master's.
    if (weights_encoding(job_.wire) == WireEncoding::fp32) return checkpoint_then_evaluate();
    servers_.request(
        this, job_.request_timeout,
        [this, checkpoint_then_evaluate](Weights master) {
          current_ = std::move(master);
          summary_.final_weights = current_;
          checkpoint_then_evaluate();
        },
        failure_handler(), master_atom::value);
  }

  std::uint64_t final_index() const { return job_.mode == TrainingMode::sync ? iteration_ : summary_.steps; }

  void fail(const std::string& who, const caf::error& error) {
    if (failed_) return;
    failed_ = true;
    auto failure = caf::make_error(caf::sec::runtime_error, fmt::format("{}: {}", who, error_text(system(), error)));
    stop_workers_then([this, failure] {
      promise_.deliver(failure);
      quit();
    });
  }

  // Every worker that joined, elastic newcomers included, learns the job is over (so its process
  // exits cleanly) before the run reports back.
  void stop_workers_then(std::function<void()> next) {
    become(ending());
    const Countdown done(1, std::move(next));  // one more for the loop below, so none can end it early
    for (auto& slot : slots_) {
      if (!slot.alive) continue;
      slot.alive = false;
      done.add();
      request(slot.handle, std::chrono::seconds(5), stop_atom::value)
          .then([done](bool) { done(); }, [done](caf::error&) { done(); });
    }
    done();
  }

  TrainingJob job_;
  ServerGroup servers_;
  EvaluatorActor evaluator_;
  DriverHooks hooks_;
  WorkerSlots slots_;
  caf::typed_response_promise<TrainingSummary> promise_;
  Weights current_;
  std::vector<Gradients> gradients_;
  std::size_t pending_ = 0;
  std::uint64_t iteration_ = 0;
  std::uint64_t issued_ = 0;
  std::uint64_t total_steps_ = 0;
  RunStatistics statistics_;
  std::uint64_t wait_round_ = 0;
  bool waiting_for_workers_ = false;
  bool started_async_ = false;
  bool finished_ = false;
  bool failed_ = false;
  Clock::time_point start_;
  TrainingSummary summary_;
};

}  // namespace

TrainingDriverActor spawn_training_driver(caf::actor_system& system, const TrainingJob& job,
                                 ParameterServerActor server, std::vector<DataWorkerActor> workers,
                                 EvaluatorActor evaluator, DriverHooks hooks) {
  return spawn_training_driver(system, job, std::vector<ParameterServerActor>{std::move(server)},
                               std::move(workers), std::move(evaluator), std::move(hooks));
}

TrainingDriverActor spawn_training_driver(caf::actor_system& system, const TrainingJob& job,
                                 std::vector<ParameterServerActor> servers, std::vector<DataWorkerActor> workers,
                                 EvaluatorActor evaluator, DriverHooks hooks) {
  return system.spawn<TrainingDriver>(job, std::move(servers), std::move(workers), std::move(evaluator),
                                      std::move(hooks));
}

}  // namespace psgrad
