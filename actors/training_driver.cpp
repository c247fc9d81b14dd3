// The training driver actor: membership (workers lost and joining), evaluation, checkpoints and the end
// of a run; the mode's schedule (sync_schedule.cpp, async_schedule.cpp) decides what workers compute.
#include "actors/training_driver.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/answer_watch.hpp"
#include "actors/countdown.hpp"
#include "actors/error_text.hpp"
#include "actors/network_thread.hpp"
#include "actors/run_schedule.hpp"
#include "actors/steady_time.hpp"
#include "actors/worker_activity.hpp"

namespace psgrad {

namespace {

using Clock = std::chrono::steady_clock;

class TrainingDriver : public TrainingDriverActor::base, private DriverServices {
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
    summary_.steps = job_.mode != TrainingMode::sync ? hooks_.start_iteration : 0;
  }

  // A server's note of a step, or a worker process's message, is handled on the network thread
  // (network_thread.hpp), and so the credit it grants leaves from there. Its handlers are bookkeeping
  // (evaluation runs in the evaluator), except writing a checkpoint: while one is collected the
  // driver stays off the network thread.
  subtype_t subtype() const override {
    return network_thread_subtype(checkpoints_collecting_.load(std::memory_order_relaxed) == 0);
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
          delayed_send(this, watch_interval(job_.request_timeout), tick_atom::value);
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
        [this](add_worker_atom, DataWorkerActor& worker, const std::string& host, std::uint32_t index) {
          welcome(index, std::move(worker), host);
          schedule_->joined(index);
        },
        [](rejoin_atom, std::uint64_t) {},
        [this](applied_atom, const StepNote& note) { schedule_->noted(note); },
        [this](tick_atom) {
          if (ended()) return;
          schedule_->watch();
          tick();
        },
    };
  }

  // Every worker was lost: the run waits (elastic) for one to join, within job.rejoin_timeout.
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
                                                         job_.rejoin_timeout.count())));
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
  // at most job.request_timeout (a worker may have died halfway through a push).
  behavior_type draining() {
    return {
        already_under_way(),
        [this](add_worker_atom, DataWorkerActor& worker, const std::string& host, std::uint32_t index) {
          welcome(index, std::move(worker), host);
          schedule_->joined(index);
        },
        [](rejoin_atom, std::uint64_t) {},
        [this](applied_atom, const StepNote& note) {
          schedule_->noted(note);
          if (!schedule_->shards_behind()) read_final_weights();
        },
        [this](tick_atom) {
          if (!schedule_->shards_behind() || Clock::now() - *draining_since_ >= job_.request_timeout)
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
        [](tick_atom) {},
    };
  }

  void tick() {
    if (outcome_ == Outcome::running) delayed_send(this, watch_interval(job_.request_timeout), tick_atom::value);
  }

  void fetch_first_weights() {
    servers_.request(
        this, job_.request_timeout,
        [this](Weights weights) {
          current_ = std::move(weights);
          version_offset_ = current_.version - std::min(current_.version, hooks_.start_iteration);
          // "Iteration 0" is the weights before any step, so every mode starts from chance.
          if (hooks_.start_iteration == 0) evaluate(0);
          schedule_ = job_.mode == TrainingMode::sync ? make_sync_schedule(*this) : make_async_schedule(*this);
          become(training());
          schedule_->start();
        },
        failure_handler(), weights_atom::value);
  }

  // -- workers -----------------------------------------------------------------------------------
  // With a trace, a joining worker's clock is probed a few times, one after the other: the probe with
  // the shortest round trip gives its offset (trace_recorder.hpp). The first probes of a new
  // connection took 1-15 ms over loopback, later ones 0.1-0.2 ms. `done` is called once the probes end.
  static constexpr int clock_probes = 8;

  void probe_clock(std::size_t k, int remaining, Countdown done) {
    if (!hooks_.trace || remaining == 0 || !slots_[k].alive) return done();
    const auto sent = steady_now_ns();
    request(slots_[k].handle, std::chrono::seconds(5), clock_atom::value)
        .then(
            [this, k, sent, remaining, done](std::int64_t worker_time) {
              hooks_.trace->add_clock_probe(static_cast<std::uint32_t>(k), sent, worker_time, steady_now_ns());
              probe_clock(k, remaining - 1, done);
            },
            [done](caf::error&) { done(); });  // a worker that does not answer is dealt with by training
  }

  std::string name_from_hooks(std::size_t k) const {
    return k < hooks_.worker_names.size() ? hooks_.worker_names[k] : std::string();
  }

  void add_slot(std::size_t k, DataWorkerActor handle, std::string name) {
    monitor(handle);
    slots_.add(k, std::move(handle), std::move(name));
    if (summary_.gradients_per_worker.size() < slots_.size()) summary_.gradients_per_worker.resize(slots_.size(), 0);
    if (summary_.workers.dropped.size() < slots_.size()) summary_.workers.dropped.resize(slots_.size(), 0);
  }

  // A worker that joined a running job.
  void welcome(std::size_t k, DataWorkerActor handle, const std::string& host) {
    add_slot(k, std::move(handle), host);
    probe_clock(k, clock_probes, Countdown(1, [] {}));
    event(fmt::format("{} takes part from the next step", slots_.name(k)));
  }

  int interrupted_by() const { return hooks_.interrupt ? hooks_.interrupt->load() : 0; }
  bool early_stop_requested() const { return hooks_.stop_early && hooks_.stop_early->load(); }

  void lose(std::size_t k, const std::string& reason) override {
    auto& slot = slots_[k];
    if (!slot.alive || outcome_ == Outcome::finished) return;
    slot.alive = false;
    ++slot.round;  // whatever it still answers is ignored
    event(fmt::format("{} lost: {}; continuing with {} worker(s)", slots_.name(k), reason, slots_.alive_count()));
    summary_.lost.push_back(WorkerLoss{static_cast<std::uint32_t>(k), slots_.name(k), summary_.steps,
                                       std::chrono::duration<double>(Clock::now() - start_).count()});
    slot.in_loop = false;
    if (schedule_) schedule_->lost(k);
    if (slots_.alive_count() == 0) all_lost();
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
      if (!job_.elastic || job_.rejoin_timeout.count() == 0)
        return fail("training", caf::make_error(caf::sec::runtime_error, "every worker was lost"));
      event(fmt::format("every worker was lost; waiting {} ms for a worker to join", job_.rejoin_timeout.count()));
      delayed_send(this, job_.rejoin_timeout, rejoin_atom::value, round);
    };
    // Nothing is lost: the server's state goes to disk before we wait or give up.
    if (checkpoints_enabled()) take_checkpoint(next);
    else next();
  }

  void loop_failed(std::size_t k, std::uint64_t round, const caf::error& error) override {
    if (round != slots_[k].round || outcome_ == Outcome::finished) return;
    // A server refused the worker's gradient (e.g. divergence): the worker relays it in words.
    if (error == caf::sec::runtime_error) return fail_with(error_text(system(), error));
    lose(k, error == caf::sec::request_timeout ? fmt::format("no answer within {} ms", job_.request_timeout.count())
                                               : error_text(system(), error));
  }

  // -- worker timings and the trace ------------------------------------------------------------------
  // Every gradient counts for the worker's compute and wait times, a dropped one too (its worker did
  // the work); the trace gets the whole exchange, from the note of the worker's previous gradient (its
  // weights went out just before) to this one's, which holds the worker's compute for the clock estimate.
  void note_timing(std::size_t k, const WorkTiming& timing, std::uint64_t step, bool used) override {
    activity_.record(k, timing);
    if (hooks_.trace)
      hooks_.trace->add(WorkerExchange{static_cast<std::uint32_t>(k), slots_.name(k), slots_[k].sent_at,
                                       steady_now_ns(), timing, step, used});
  }

  void trace_span(const std::string& thread, const std::string& name, std::int64_t start,
                  std::uint64_t step) override {
    if (hooks_.trace) hooks_.trace->add(TraceSpan{0, "server", thread, name, start, steady_now_ns(), step});
  }

  void trace_apply(const StepNote& note) override {
    if (!hooks_.trace || note.summed == 0) return;
    if (last_applied_.size() <= note.shard) last_applied_.resize(servers_.size() > note.shard ? servers_.size() : note.shard + 1, UINT64_MAX);
    if (note.version == last_applied_[note.shard]) return;
    last_applied_[note.shard] = note.version;
    hooks_.trace->add(TraceSpan{0, "server", fmt::format("shard {}", note.shard), "apply", note.apply_started,
                                note.apply_ended, note.version});
  }

  WorkerStatistics worker_statistics() const {
    auto statistics = summary_.workers;
    statistics.compute_ms_mean = activity_.mean_compute_ms(slots_.size());
    statistics.wait_ms_mean = activity_.mean_wait_ms(slots_.size());
    return statistics;
  }

  // -- checkpoints -----------------------------------------------------------------------------------
  bool checkpoint_due(std::uint64_t done) const override {
    return checkpoints_enabled() && job_.checkpoint_every > 0 && done % job_.checkpoint_every == 0;
  }

  bool checkpoints_enabled() const { return static_cast<bool>(hooks_.on_checkpoint); }

  // Collects the server's state and every live worker's stream position, hands them to the hook, then
  // continues with `then`. In sync mode the workers are idle here, so the positions are exact (with
  // backup workers, one still computing a dropped gradient reports the position after it). Async
  // checkpoints may overlap: the driver leaves the network thread until the last one is written.
  void take_checkpoint(std::function<void()> then) override {
    auto checkpoint = std::make_shared<TrainingCheckpoint>();
    checkpoint->iteration = done();
    checkpoints_collecting_.fetch_add(1, std::memory_order_relaxed);  // answers come to a scheduler thread
    const Countdown collected(1 + slots_.alive_count(), [this, checkpoint, then] {
      std::sort(checkpoint->workers.begin(), checkpoint->workers.end(),
                [](const WorkerStreamState& a, const WorkerStreamState& b) { return a.worker < b.worker; });
      hooks_.on_checkpoint(*checkpoint);
      checkpoints_collecting_.fetch_sub(1, std::memory_order_relaxed);
      then();
    });
    servers_.request_state(
        this, job_.request_timeout,
        [checkpoint, collected](ServerState state) {
          checkpoint->version = state.weights.version;
          checkpoint->layout_hash = state.weights.layout_hash;
          checkpoint->weights.assign(state.weights.values.data(),
                                     state.weights.values.data() + state.weights.values.size());
          checkpoint->optimizer = std::move(state.optimizer);
          collected();
        },
        failure_handler());
    for (auto& slot : slots_) {
      if (!slot.alive) continue;
      request(slot.handle, job_.request_timeout, state_atom::value)
          .then(
              [checkpoint, collected](WorkerStreamState& stream) {
                checkpoint->workers.push_back(stream);
                collected();
              },
              [collected](caf::error&) { collected(); });  // a worker lost meanwhile restarts from its seed
    }
  }

  // -- evaluation ------------------------------------------------------------------------------------
  // Iterations (sync) or steps (async/ssp) done, and what they count to at the planned end.
  std::uint64_t done() const {
    if (schedule_) return schedule_->done();
    return job_.mode == TrainingMode::sync ? hooks_.start_iteration : summary_.steps;
  }
  std::uint64_t total() const {
    if (schedule_) return schedule_->total();
    return job_.mode == TrainingMode::sync ? job_.iterations
                                           : job_.iterations * std::max<std::size_t>(1, job_.num_workers);
  }

  TrainingProgress progress(std::uint64_t index, bool final) {
    TrainingProgress p;
    p.iteration = index;
    p.total_iterations = total();
    p.samples = summary_.samples;
    p.wall_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    p.train_loss = statistics_.take_mean_loss();
    p.staleness_mean = summary_.staleness_mean;
    p.staleness_max = summary_.staleness_max;
    p.gradients_per_worker = summary_.gradients_per_worker;
    p.workers = worker_statistics();
    p.final = final;
    return p;
  }

  // The last one is left to the final evaluation.
  bool evaluation_due(std::uint64_t index) const override {
    return job_.eval_frequency > 0 && index % job_.eval_frequency == 0 && index < total();
  }

  void evaluate(std::uint64_t index) override {
    // A plain send without a sender: the evaluator's report goes to its callback, not back here.
    if (job_.mode == TrainingMode::sync)
      return caf::anon_send(evaluator_, evaluate_atom::value, current_, progress(index, false));
    // Async/ssp: the weights live on the servers; the newest are fetched (they may include a step or
    // two more). The servers answer in order, so these reach the evaluator before the final ones.
    servers_.request(
        this, job_.request_timeout,
        [this, progress = progress(index, false)](Weights weights) {
          caf::anon_send(evaluator_, evaluate_atom::value, std::move(weights), progress);
        },
        failure_handler(), weights_atom::value);
  }

  void evaluate_then(std::uint64_t index, std::function<void()> next) override {
    request(evaluator_, caf::infinite, evaluate_atom::value, current_, progress(index, false))
        .then([next](EvaluationReport&) { next(); }, [this](caf::error& error) { fail("evaluator", error); });
  }

  void event(const std::string& line) {
    if (hooks_.on_event) hooks_.on_event(line);
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
        this, job_.request_timeout,
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
    stop_workers_then([this, failure] {
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

  // -- DriverServices, for the schedule ---------------------------------------------------------------
  TrainingDriverActor::base& self() override { return *this; }
  const TrainingJob& job() const override { return job_; }
  const DriverHooks& hooks() const override { return hooks_; }
  WorkerSlots& slots() override { return slots_; }
  ServerGroup& servers() override { return servers_; }
  TrainingSummary& summary() override { return summary_; }
  RunStatistics& statistics() override { return statistics_; }
  Weights& current() override { return current_; }
  std::uint64_t version_offset() const override { return version_offset_; }
  bool ended() const override { return outcome_ != Outcome::running; }
  bool stopping() const override { return interrupted_by() != 0 || early_stop_requested(); }

  // How the run ended, once it has: finished reports a summary, failed its failure.
  enum class Outcome { running, finished, failed };

  // Checkpoints being collected; read by CAF's network thread when a message arrives (see subtype).
  std::atomic<int> checkpoints_collecting_{0};
  TrainingJob job_;
  ServerGroup servers_;
  EvaluatorActor evaluator_;
  DriverHooks hooks_;
  WorkerSlots slots_;
  std::unique_ptr<RunSchedule> schedule_;  // once the loops start
  caf::typed_response_promise<TrainingSummary> promise_;
  Weights current_;
  std::uint64_t version_offset_ = 0;         // the servers' versions ahead of this run's steps (a resumed run)
  std::vector<std::uint64_t> last_applied_;  // each shard's last traced apply
  RunStatistics statistics_;
  WorkerActivity activity_;
  std::uint64_t wait_round_ = 0;             // which wait for workers the rejoin timer belongs to
  std::optional<Clock::time_point> draining_since_;  // when the run began to wait for its shards
  Outcome outcome_ = Outcome::running;
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
                                          std::vector<ParameterServerActor> servers,
                                          std::vector<DataWorkerActor> workers, EvaluatorActor evaluator,
                                          DriverHooks hooks) {
  return system.spawn<TrainingDriver>(job, std::move(servers), std::move(workers), std::move(evaluator),
                                      std::move(hooks));
}

}  // namespace psgrad
