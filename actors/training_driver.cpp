// The training driver actor's phases, workers lost and joining, and the end of a run (its state,
// checkpoints and evaluations: driver_base.hpp); the mode's schedule decides what workers compute.
#include "actors/training_driver.hpp"

#include <chrono>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/driver_base.hpp"
#include "payloads/refused_payload.hpp"

namespace psgrad {

namespace {

class TrainingDriver : public DriverBase {
 public:
  using DriverBase::DriverBase;

  behavior_type make_behavior() override {
    // A remote worker's process may die with our request pending: the down message drops it at once
    // instead of waiting for the request timeout.
    set_down_handler([this](caf::down_msg& down) {
      if (worker_ended(down.source)) return;
      for (std::size_t k = 0; k < slots_.size(); ++k)
        if (slots_[k].handle.address() == down.source) lose(k, down_reason(down.reason));
      const auto& servers = servers_.handles();
      for (std::size_t i = 0; i < servers.size(); ++i)
        if (servers[i].address() == down.source) lose_server(i, down_reason(down.reason));
    });
    // A shard in a process of its own (`psgrad shard`) may die while a push waits for it: nobody would
    // answer, so its loss must end the run at once rather than after the workers' request timeouts.
    for (const auto& server : servers_.handles())
      if (server && server.node() != node()) monitor(server);
    return idle();
  }

 private:
  // A worker lost mid-request still holds this driver (its request's promise) while the driver holds it
  // in its slots: the driver lets go of every handle as it quits, so both, and the detached evaluator
  // they reach, are freed and the actor system can shut down.
  void on_exit() override {
    schedule_.reset();
    slots_ = WorkerSlots{};
    evaluator_ = EvaluatorActor{};
    servers_ = ServerGroup({});
  }

  // -- phases (see the diagram in training_driver.hpp) ----------------------------------------------
  static auto already_under_way() {
    return [](run_atom) -> caf::result<TrainingSummary> {
      return caf::make_error(caf::sec::invalid_argument, "this training run is already under way");
    };
  }

  behavior_type idle() {
    return {
        [this](run_atom) -> caf::result<TrainingSummary> {
          promise_ = make_response_promise<TrainingSummary>();
          start_ = Clock::now();
          become(starting());
          delayed_send(this, watch_interval(job_.cluster.request_timeout), tick_atom::value);
          // With a trace, every worker's clock is probed before the first step, while it is idle: a
          // probe that waits behind a gradient's compute says little about the offset.
          const Countdown probed(1, [this] { fetch_first_weights(); });
          for (std::size_t k = 0; k < slots_.size(); ++k) {
            if (!slots_[k].alive || !hooks_.trace) continue;
            probed.add();
            probe_clock(k, clock_probes, probed);
          }
          probed();
          return promise_;
        },
        [this](add_worker_atom, DataWorkerActor& worker, const std::string& host, std::uint32_t index) {
          add_slot(index, std::move(worker), host);
        },
        [](rejoin_atom, std::uint64_t) {},
        [](applied_atom, const StepNote&) {},
        [](tick_atom) {},
    };
  }

  // A worker that joins a running job takes part in the schedule from the next step.
  auto joins_the_loops() {
    return [this](add_worker_atom, DataWorkerActor& worker, const std::string& host, std::uint32_t index) {
      welcome(index, std::move(worker), host);
      schedule_->joined(index);
    };
  }

  // The clocks are probed and the first weights fetched; the loops have not started.
  behavior_type starting() {
    return {
        already_under_way(),
        [this](add_worker_atom, DataWorkerActor& worker, const std::string& host, std::uint32_t index) {
          welcome(index, std::move(worker), host);
        },
        [](rejoin_atom, std::uint64_t) {},
        [](applied_atom, const StepNote&) {},
        [this](tick_atom) { tick(); },
    };
  }

  // Every worker runs its own push/pull loop; the schedule hears of every gradient.
  behavior_type training() {
    return {
        already_under_way(),
        joins_the_loops(),
        [](rejoin_atom, std::uint64_t) {},
        [this](applied_atom, const StepNote& note) { schedule_->noted(note); },
        [this](tick_atom) {
          if (ended()) return;
          schedule_->watch();
          tick();
        },
    };
  }

  // Every worker was lost: the run waits (elastic) for one to join, within job.cluster.rejoin_timeout.
  behavior_type waiting_for_workers() {
    return {
        already_under_way(),
        [this](add_worker_atom, DataWorkerActor& worker, const std::string& host, std::uint32_t index) {
          welcome(index, std::move(worker), host);
          if (!schedule_) return become(starting());  // the loops start with the first weights
          become(training());
          schedule_->joined(index);
        },
        [this](rejoin_atom, std::uint64_t wait_round) {
          if (wait_round == wait_round_)
            fail("training", caf::make_error(caf::sec::runtime_error,
                                             fmt::format("every worker was lost and none joined within {} ms",
                                                         job_.cluster.rejoin_timeout.count())));
        },
        [this](applied_atom, const StepNote& note) {
          if (schedule_) schedule_->noted(note);
        },
        // Steps check the interrupt; with every worker lost there are none, so the timer does.
        [this](tick_atom) {
          if (interrupted_by() != 0) {
            become(schedule_ ? training() : starting());
            return finish();
          }
          tick();
        },
    };
  }

  // The run is over, but some shard still takes steps the workers fed: the final weights wait for it,
  // at most job.cluster.request_timeout (a worker may have died halfway through a push).
  behavior_type draining() {
    return {
        already_under_way(),
        joins_the_loops(),
        [](rejoin_atom, std::uint64_t) {},
        [this](applied_atom, const StepNote& note) {
          schedule_->noted(note);
          if (!schedule_->shards_behind()) read_final_weights();
        },
        [this](tick_atom) {
          if (!schedule_->shards_behind() || Clock::now() - *draining_since_ >= job_.cluster.request_timeout)
            return read_final_weights();
          tick();
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
        [](applied_atom, const StepNote&) {},
        [this](tick_atom) { workers_ended(); },  // a failed run's workers had their time to end
    };
  }

  void tick() {
    if (outcome_ == Outcome::running) delayed_send(this, watch_interval(job_.cluster.request_timeout), tick_atom::value);
  }

  void fetch_first_weights() {
    servers_.request(
        this, job_.cluster.request_timeout,
        [this](Weights weights) {
          current_ = std::move(weights);
          version_offset_ = current_.version - std::min(current_.version, hooks_.start_iteration);
          // "Iteration 0" is the weights before any step, so every mode starts from chance.
          if (hooks_.start_iteration == 0) evaluate(0);
          schedule_ = job_.cluster.mode == TrainingMode::sync ? make_sync_schedule(*this) : make_async_schedule(*this);
          become(training());
          schedule_->start();
        },
        failure_handler(), weights_atom::value);
  }

  // A worker that joined a running job.
  void welcome(std::size_t k, DataWorkerActor handle, const std::string& host) {
    add_slot(k, std::move(handle), host);
    probe_clock(k, clock_probes, Countdown(1, [] {}));
    event(fmt::format("{} takes part from the next step", slots_.name(k)));
  }

  void lose(std::size_t k, const std::string& reason) override { go_on_without(k, "lost", reason); }

  // A worker whose payload arrived refused (its shared memory written by another process, say): the
  // run goes on without it as without a lost one, and its process is told why, so it ends saying so.
  void drop(std::size_t k, const caf::error& refused) {
    if (!slots_[k].alive || outcome_ == Outcome::finished) return;
    go_on_without(k, "dropped", error_text(system(), refused));
    send_exit(slots_[k].handle, refused);
  }

  void go_on_without(std::size_t k, const char* what_happened, const std::string& reason) {
    auto& slot = slots_[k];
    if (!slot.alive || outcome_ == Outcome::finished) return;
    slot.alive = false;
    ++slot.round;  // whatever it still answers is ignored
    event(fmt::format("{} {}: {}; continuing with {} worker(s)", slots_.name(k), what_happened, reason,
                      slots_.alive_count()));
    summary_.lost.push_back(WorkerLoss{static_cast<std::uint32_t>(k), slots_.name(k), summary_.steps,
                                       std::chrono::duration<double>(Clock::now() - start_).count()});
    slot.in_loop = false;
    if (schedule_) schedule_->lost(k);
    if (hooks_.on_worker_lost) hooks_.on_worker_lost(k);
    if (slots_.alive_count() == 0) all_lost();
  }

  // Without every shard no step can be taken. The checkpoint on disk stays the last periodic one: it
  // holds every shard, the lost one included, at one step, where the others' newer state joined with
  // the lost shard's older one would resume to weights no run ever had.
  void lose_server(std::size_t i, const std::string& reason) {
    if (outcome_ == Outcome::failed) return;
    const auto saved = last_checkpoint_ ? fmt::format("the last checkpoint (iteration {}) holds every shard", *last_checkpoint_)
                       : checkpoints_enabled() ? std::string("no checkpoint was taken yet")
                                               : std::string("nothing is saved without training.checkpoint_path");
    fail_with(fmt::format("{} lost: {}; {}", ServerGroup::server_name(servers_.size(), i), reason, saved));
  }

  std::string down_reason(const caf::error& reason) {
    if (reason == caf::exit_reason::remote_link_unreachable)
      return "its connection dropped (the process died, froze or lost the network)";
    return reason ? error_text(system(), reason) : std::string("it stopped");
  }

  void all_lost() {
    if (outcome_ != Outcome::running) return;
    become(waiting_for_workers());
    const auto round = ++wait_round_;
    auto next = [this, round] {
      if (round != wait_round_ || slots_.alive_count() > 0) return;  // a worker joined meanwhile
      if (!job_.cluster.elastic || job_.cluster.rejoin_timeout.count() == 0)
        return fail("training", caf::make_error(caf::sec::runtime_error, "every worker was lost"));
      event(fmt::format("every worker was lost; waiting {} ms for a worker to join", job_.cluster.rejoin_timeout.count()));
      delayed_send(this, job_.cluster.rejoin_timeout, rejoin_atom::value, round);
    };
    // Nothing is lost: the server's state goes to disk before we wait or give up.
    if (checkpoints_enabled()) take_checkpoint(next);
    else next();
  }

  void loop_failed(std::size_t k, std::uint64_t round, const caf::error& error) override {
    if (round != slots_[k].round || outcome_ == Outcome::finished) return;
    if (is_refused_payload(error)) return drop(k, error);
    // A server refused the worker's gradient (e.g. divergence): the worker relays it in words.
    if (error == caf::sec::runtime_error) return fail_with(error_text(system(), error));
    lose(k, error == caf::sec::request_timeout ? fmt::format("no answer within {} ms", job_.cluster.request_timeout.count())
                                               : error_text(system(), error));
  }

  // -- the end of the run ------------------------------------------------------------------------------
  void finish() override {
    if (outcome_ != Outcome::running) return;  // a failed run reports its failure, never a summary
    if (!schedule_) return read_final_weights();
    schedule_->settle_end([this] {
      if (outcome_ != Outcome::running) return;
      if (!schedule_->shards_behind()) return read_final_weights();
      if (draining_since_) return;  // already draining: its clock keeps running
      draining_since_ = Clock::now();
      become(draining());
    });
  }

  // The final weights and state are fetched once every shard has applied what shard 0 has (sync
  // pipelined: every step the workers fed).
  void read_final_weights() {
    if (outcome_ != Outcome::running) return;
    outcome_ = Outcome::finished;
    if (draining_since_) become(training());  // late notes are ignored until the workers are stopped
    summary_.interrupted_by = interrupted_by();
    summary_.stopped_early = summary_.interrupted_by == 0 && early_stop_requested();
    summary_.training_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    if (!schedule_) return finish_with_weights();
    servers_.request(
        this, job_.cluster.request_timeout,
        [this](Weights weights) {
          current_ = std::move(weights);
          finish_with_weights();
        },
        failure_handler(), weights_atom::value);
  }

  void finish_with_weights() {
    summary_.final_weights = current_;
    summary_.workers = worker_statistics();
    auto evaluate_final = [this] {
      // Requests reach the evaluator after every snapshot sent before, so this report comes last.
      request(evaluator_, caf::infinite, evaluate_atom::value, current_, progress(done(), true))
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
    // The final evaluation and model are the optimizer's averages with with_averages, else the fp32
    // master weights (wire: the workers got encoded ones).
    const auto replace_final = [this, checkpoint_then_evaluate](Weights final_weights) {
      current_ = std::move(final_weights);
      summary_.final_weights = current_;
      checkpoint_then_evaluate();
    };
    if (job_.training.with_averages) return fetch_evaluated(replace_final);
    if (weights_encoding(job_.cluster.wire) == WireEncoding::fp32) return checkpoint_then_evaluate();
    servers_.request(this, job_.cluster.request_timeout, replace_final, failure_handler(), master_atom::value);
  }

  void fail(const std::string& who, const caf::error& error) override {
    fail_with(fmt::format("{}: {}", who, error_text(system(), error)));
  }

  std::function<void(const std::string&, const caf::error&)> failure_handler() override {
    return [this](const std::string& who, const caf::error& error) { fail(who, error); };
  }

  void fail_with(const std::string& reason) {
    if (outcome_ == Outcome::failed) return;
    outcome_ = Outcome::failed;
    auto failure = caf::make_error(caf::sec::runtime_error, reason);
    become(ending());
    end_workers_then(failure, [this, failure] {
      promise_.deliver(failure);
      quit();
    });
  }

  // Every worker that joined, elastic newcomers included, learns the job is over (so its process exits
  // cleanly) before the run reports back.
  void stop_workers_then(std::function<void()> next) {
    become(ending());
    const Countdown stopped(1, std::move(next));  // one more for the loop below, so none can end it early
    for (auto& slot : slots_) {
      if (!slot.alive) continue;
      slot.alive = false;
      stopped.add();
      request(slot.handle, std::chrono::seconds(5), stop_atom::value)
          .then([stopped](bool) { stopped(); }, [stopped](caf::error&) { stopped(); });
    }
    stopped();
  }

};

}  // namespace

TrainingDriverActor spawn_training_driver(caf::actor_system& system, const TrainingJob& job,
                                          ParameterServerActor server, std::vector<DataWorkerActor> workers,
                                          EvaluatorActor evaluator, DriverHooks hooks) {
  return spawn_training_driver(system, job, std::vector<ParameterServerActor>{std::move(server)},
                               std::move(workers), std::move(evaluator), std::move(hooks));
}

TrainingDriverActor spawn_training_driver(caf::actor_system& system, const TrainingJob& job,
                                          std::vector<ParameterServerActor> servers,
                                          std::vector<DataWorkerActor> workers, EvaluatorActor evaluator,
                                          DriverHooks hooks) {
  return system.spawn<TrainingDriver>(job, std::move(servers), std::move(workers), std::move(evaluator),
                                      std::move(hooks));
}

}  // namespace psgrad
