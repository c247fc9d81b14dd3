// The training driver actor. Over 350 lines for a reason: its handlers (the sync schedule, the
// async/ssp schedule, lost and joining workers, checkpoints, the end of a run) share one state; the
// parts that stand alone live in worker_slots.hpp, run_statistics.hpp, server_group.hpp and countdown.hpp.
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
#include "actors/run_statistics.hpp"
#include "actors/server_group.hpp"
#include "actors/steady_time.hpp"
#include "actors/worker_activity.hpp"
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

  // A server's note of a step, or a worker process's message, is handled on the network thread
  // (network_thread.hpp), and so the credit it grants leaves from there. Its handlers are bookkeeping
  // (evaluation runs in the evaluator), except writing a checkpoint: while one is collected the
  // driver stays off the network thread.
  subtype_t subtype() const override {
    return network_thread_subtype(on_network_thread_.load(std::memory_order_relaxed));
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
          delayed_send(this, watch_interval(job_.request_timeout), tick_atom::value);
          // With a trace, every worker's clock is probed before the first step, while it is idle: a
          // probe that waits behind a gradient's compute says little about the offset.
          const Countdown probed(1, [this] {
            servers_.request(
                this, job_.request_timeout,
                [this](Weights weights) {
                  current_ = std::move(weights);
                  version_offset_ = current_.version - std::min(current_.version, hooks_.start_iteration);
                  // "Iteration 0" is the weights before any step, so every mode starts from chance.
                  if (hooks_.start_iteration == 0) evaluate(0);
                  if (job_.mode == TrainingMode::sync) sync_start();
                  else async_start();
                },
                failure_handler(), weights_atom::value);
          });
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

  behavior_type training() {
    return {
        [](run_atom) -> caf::result<TrainingSummary> {
          return caf::make_error(caf::sec::invalid_argument, "this training run is already under way");
        },
        [this](add_worker_atom, DataWorkerActor& worker, const std::string& host, std::uint32_t index) {
          add_slot(index, std::move(worker), host);
          probe_clock(index, clock_probes, Countdown(1, [] {}));
          event(fmt::format("{} takes part from the next step", worker_name(index)));
          waiting_for_workers_ = false;
          if (!started_loops_) return;
          if (job_.mode == TrainingMode::sync) sync_join(index);
          else start_loop(index);
        },
        [this](rejoin_atom, std::uint64_t wait_round) {
          if (waiting_for_workers_ && wait_round == wait_round_)
            fail("training", caf::make_error(caf::sec::runtime_error,
                                             fmt::format("every worker was lost and none joined within {} ms",
                                                         job_.rejoin_timeout.count())));
        },
        [this](applied_atom, const StepNote& note) {
          if (job_.mode == TrainingMode::sync) return sync_noted(note);
          // Async: only shard 0's notes drive the schedule; the others say how far each shard is.
          if (note.shard < shard_steps_.size()) ++shard_steps_[note.shard];
          if (note.shard != 0) {
            trace_apply(note);
            if (awaiting_shards_ && !shards_behind()) finish();
            return;
          }
          async_applied(note);
        },
        [this](tick_atom) { watch_workers(); },
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

  std::function<void(const std::string&, const caf::error&)> failure_handler() {
    return [this](const std::string& who, const caf::error& error) { fail(who, error); };
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

  std::size_t alive_count() const { return slots_.alive_count(); }
  std::uint64_t min_clock() const { return slots_.min_clock(); }

  int interrupted_by() const { return hooks_.interrupt ? hooks_.interrupt->load() : 0; }
  bool early_stop_requested() const { return hooks_.stop_early && hooks_.stop_early->load(); }
  bool stopping() const { return interrupted_by() != 0 || early_stop_requested(); }

  std::string worker_name(std::size_t k) const { return slots_.name(k); }

  void lose(std::size_t k, const std::string& reason) {
    auto& slot = slots_[k];
    if (!slot.alive || finished_) return;
    slot.alive = false;
    ++slot.round;  // whatever it still answers is ignored
    event(fmt::format("{} lost: {}; continuing with {} worker(s)", worker_name(k), reason, alive_count()));
    summary_.lost.push_back(WorkerLoss{static_cast<std::uint32_t>(k), worker_name(k), summary_.steps,
                                       std::chrono::duration<double>(Clock::now() - start_).count()});
    slot.in_loop = false;
    if (job_.mode == TrainingMode::sync) {
      if (started_loops_) update_barrier([](const std::vector<std::uint32_t>&) {});
    } else {
      granted_ -= slot.granted - slot.clock;  // its unfinished credits go to the others
      slot.granted = slot.clock;
    }
    // The slowest may have been the lost one: workers waiting on it can go on (ssp).
    if (job_.mode != TrainingMode::sync && started_loops_ && alive_count() > 0) {
      if (stopping() && !any_outstanding()) return finish();
      grant_all();
    }
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

  // -- synchronous: every worker computes from the same weights, one step from their sum -----------
  // Each worker runs its own push/pull loop as in async, and the barrier sits on the servers: a step
  // is taken once the gradients it needs are in, and answers every one of them with the new weights, so
  // a gradient goes worker -> servers -> worker with the driver off its path. The driver names the
  // members and how many gradients a step needs ("barrier"), and the stopping point ("until"): the
  // workers compute only from weights older than it, so they wait there with the weights of that step
  // while the driver evaluates, checkpoints or ends the run. Shard 0 tells it of every gradient.
  //
  // How many gradients a step waits for: every live worker's; with backup workers, the first
  // num_workers - backup_workers to arrive (all live workers' when fewer are left).
  std::size_t gradients_needed() const {
    const auto alive = alive_count();
    if (job_.backup_workers == 0) return alive;
    return std::min(alive, job_.num_workers > job_.backup_workers ? job_.num_workers - job_.backup_workers : 1);
  }

  std::vector<std::uint32_t> members() const {
    std::vector<std::uint32_t> alive;
    for (std::size_t k = 0; k < slots_.size(); ++k)
      if (slots_[k].alive) alive.push_back(static_cast<std::uint32_t>(k));
    return alive;
  }

  // Tells every server who takes part; `then` gets the workers shard 0 holds a gradient of.
  void update_barrier(std::function<void(const std::vector<std::uint32_t>&)> then) {
    const auto handles = servers_.handles();
    auto waiting = std::make_shared<std::vector<std::uint32_t>>();
    const Countdown done(handles.size(), [waiting, then] { then(*waiting); });
    for (std::size_t i = 0; i < handles.size(); ++i)
      request(handles[i], job_.request_timeout, barrier_atom::value, members(),
              static_cast<std::uint32_t>(gradients_needed()))
          .then(
              [waiting, done, i](std::vector<std::uint32_t>& held) {
                if (i == 0) *waiting = std::move(held);
                done();
              },
              [this, i](caf::error& error) { fail(servers_.size() == 1 ? "parameter server" : fmt::format("parameter server shard {}", i), error); });
  }

  // The next version the workers stop at: an evaluation (for its exact weights), a checkpoint, the end.
  std::uint64_t next_stop(std::uint64_t from) const {
    for (auto at = from + 1;; ++at)
      if (at >= job_.iterations || evaluation_due(at) || checkpoint_due(at)) return at;
  }

  void sync_start() {
    started_loops_ = true;
    listen();
    if (iteration_ >= job_.iterations || stopping()) return finish();
    until_ = next_stop(iteration_);
    step_started_ = steady_now_ns();
    // The servers know their peers and the members before any gradient can reach them.
    introduce_shards([this] {
      update_barrier([this](const std::vector<std::uint32_t>&) {
        for (std::size_t k = 0; k < slots_.size(); ++k)
          if (slots_[k].alive) start_sync_loop(k, current_);
      });
    });
  }

  // Several shards: each learns every shard and what it holds (their plans), to exchange the sums of
  // squares of each step's summed gradients with those it shares an array with; all have acknowledged
  // before `then`, so no step can start without them, even on remote shards.
  void introduce_shards(std::function<void()> then) {
    if (servers_.size() == 1) return then();
    servers_.prepare(
        this, job_.request_timeout,
        [this, then] {
          const auto& handles = servers_.handles();
          std::vector<ShardPeer> peers;
          for (const auto& handle : handles) peers.push_back(caf::actor_cast<ShardPeer>(handle));
          const Countdown introduced(handles.size(), then);
          for (std::size_t i = 0; i < handles.size(); ++i)
            request(handles[i], job_.request_timeout, peers_atom::value, static_cast<std::uint32_t>(i), peers,
                    servers_.plans())
                .then([introduced](bool) { introduced(); },
                      [this, i](caf::error& error) { fail(fmt::format("parameter server shard {}", i), error); });
        },
        failure_handler());
  }

  void start_sync_loop(std::size_t k, const Weights& weights) {
    auto& slot = slots_[k];
    slot.in_loop = true;
    slot.last_progress = Clock::now();
    slot.sent_at = steady_now_ns();
    const auto round = ++slot.round;
    request(slot.handle, caf::infinite, train_atom::value, weights, servers_.handles(), std::uint64_t{0})
        .then([](bool) {}, [this, k, round](caf::error& error) { loop_failed(k, round, error); });
    send(slot.handle, until_atom::value, until_ + version_offset_);
  }

  // A worker that joins takes part from the step being gathered: the servers wait for it first, then
  // it gets their current weights.
  void sync_join(std::size_t k) {
    update_barrier([this, k](const std::vector<std::uint32_t>&) {
      servers_.request(
          this, job_.request_timeout,
          [this, k](Weights weights) {
            if (slots_[k].alive && !finished_) start_sync_loop(k, weights);
          },
          failure_handler(), weights_atom::value);
    });
  }

  // Shard 0 tells of every gradient (its statistics come from there); a step is done once every shard
  // has taken it, so that the weights fetched at a stopping point are the step's on every shard.
  void sync_noted(const StepNote& note) {
    if (finished_ || failed_ || note.worker >= slots_.size() || note.shard >= shard_steps_.size()) return;
    const std::size_t k = note.worker;
    if (note.shard == 0) {
      auto& slot = slots_[k];
      slot.last_progress = Clock::now();
      note_timing(k, note.timing, iteration_, note.summed > 0);
      slot.sent_at = steady_now_ns();
      if (note.summed == 0) ++summary_.workers.dropped[k];
      if (note.summed > 0) {
        // Pipelined, a step sums gradients from the weights a step older than its own.
        step_staleness_ = std::max(step_staleness_, note.version - 1 - note.computed_from);
        summary_.samples += note.samples;
        statistics_.record_loss(note.loss);
        ++summary_.gradients_per_worker[k];
      }
    }
    if (note.summed == 0 || ++shard_notes_[note.shard] < note.summed) return;
    // That shard's step is done.
    shard_notes_[note.shard] = 0;
    ++shard_steps_[note.shard];
    trace_apply(note);
    while (*std::min_element(shard_steps_.begin(), shard_steps_.end()) > steps_taken_) {
      ++steps_taken_;
      if (sync_step_done()) return;
    }
    if (awaiting_shards_ && !shards_behind()) finish();
  }

  // True when the run stops here for now (a stopping point or the end).
  bool sync_step_done() {
    trace_span("driver", "step", step_started_, iteration_);
    step_started_ = steady_now_ns();
    ++summary_.steps;
    statistics_.record_staleness(static_cast<double>(step_staleness_), summary_);
    step_staleness_ = 0;
    ++iteration_;
    for (auto& other : slots_) other.last_progress = Clock::now();
    if (iteration_ >= until_) {
      if (!settling_stop_) sync_stop_point();  // else settle_pipelined_stop goes on from here
      return true;
    }
    // Interrupted or stopped early: the workers stop after the step they are computing.
    if (stopping() && !settled_stop_) {
      until_ = iteration_ + 1;
      for (auto& other : slots_)
        if (other.alive && other.in_loop) send(other.handle, until_atom::value, until_ + version_offset_);
      if (job_.pipeline) settle_pipelined_stop();
    }
    return false;
  }

  // Pipelined sync, stopped between stopping points: a worker may have sent a push for a step past
  // the stop before it heard of it, and a push no step takes would leave its batch unserved on resume.
  // So every worker is asked which step its last push feeds, and all push up to the furthest: each
  // push is applied, and the run ends at that step. A worker asked has heard of the stop (the driver's
  // messages to it keep their order), so it starts no push past it on its own.
  void settle_pipelined_stop() {
    settling_stop_ = true;
    settled_stop_ = true;
    ask_fed([this](const FedRange& fed) {
      settling_stop_ = false;
      if (finished_ || failed_) return;
      const auto last = fed.furthest > version_offset_ ? fed.furthest - version_offset_ : 0;
      if (last > until_) {
        until_ = last;
        // The question may have taken long: each worker's clock for the raised stop starts now, as at
        // any stop, so a slow answer does not make the next watch tick drop healthy workers.
        for (auto& slot : slots_) {
          slot.last_progress = Clock::now();
          if (slot.alive && slot.in_loop) send(slot.handle, until_atom::value, until_ + version_offset_);
        }
      }
      if (iteration_ >= until_) sync_stop_point();
    });
  }

  // Which steps the live workers' last pushes feed: the smallest and the furthest answer (UINT64_MAX
  // and 0 when none answered; a worker lost meanwhile feeds no more steps).
  struct FedRange {
    std::uint64_t smallest = UINT64_MAX;
    std::uint64_t furthest = 0;
  };

  void ask_fed(std::function<void(const FedRange&)> then) {
    auto range = std::make_shared<FedRange>();
    const Countdown answered(1, [range, then] { then(*range); });
    for (auto& slot : slots_) {
      if (!slot.alive) continue;
      answered.add();
      request(slot.handle, job_.request_timeout, fed_atom::value)
          .then(
              [range, answered](std::uint64_t fed) {
                range->smallest = std::min(range->smallest, fed);
                range->furthest = std::max(range->furthest, fed);
                answered();
              },
              [answered](caf::error&) { answered(); });
    }
    answered();
  }

  // Every worker waits with the weights of this step: evaluate, checkpoint or end, then go on.
  void sync_stop_point() {
    if (stopping() || iteration_ >= job_.iterations) return finish();
    auto next = [this] {
      if (checkpoint_due(iteration_)) take_checkpoint([this] { sync_continue(); });
      else sync_continue();
    };
    if (!evaluation_due(iteration_)) return next();
    servers_.request(
        this, job_.request_timeout,
        [this, next](Weights weights) {
          current_ = std::move(weights);
          // With early stopping the next step waits for this evaluation's verdict, so a sync run
          // stops at the same step whatever the timing.
          if (job_.patience > 0) return evaluate_then(iteration_, next);
          evaluate(iteration_);
          current_ = Weights{};  // the servers step in place when nobody else holds their weights
          next();
        },
        failure_handler(), weights_atom::value);
  }

  void sync_continue() {
    if (stopping()) return finish();
    until_ = next_stop(iteration_);
    step_started_ = steady_now_ns();
    for (auto& slot : slots_) {
      slot.last_progress = Clock::now();
      if (slot.alive && slot.in_loop) send(slot.handle, until_atom::value, until_ + version_offset_);
    }
  }

  // A step that has waited longer than request_timeout: the live workers shard 0 holds no gradient of
  // are frozen, and are dropped (the step then goes on without them).
  void watch_sync_step() {
    if (!started_loops_ || iteration_ >= until_) return;
    const auto now = Clock::now();
    bool overdue = false;
    for (const auto& slot : slots_)
      overdue = overdue || (slot.alive && slot.in_loop && now - slot.last_progress > job_.request_timeout);
    if (!overdue) return;
    update_barrier([this](const std::vector<std::uint32_t>& waiting) {
      const auto now = Clock::now();
      for (std::size_t k = 0; k < slots_.size(); ++k) {
        const auto& slot = slots_[k];
        const bool holds = std::find(waiting.begin(), waiting.end(), k) != waiting.end();
        if (slot.alive && slot.in_loop && !holds && now - slot.last_progress > job_.request_timeout)
          lose(k, fmt::format("no answer within {} ms", job_.request_timeout.count()));
      }
    });
  }

  void trace_apply(const StepNote& note) {
    if (!hooks_.trace || note.summed == 0 || note.version == last_applied_[note.shard % last_applied_.size()]) return;
    last_applied_[note.shard % last_applied_.size()] = note.version;
    hooks_.trace->add(TraceSpan{0, "server", fmt::format("shard {}", note.shard), "apply", note.apply_started,
                                note.apply_ended, note.version});
  }

  // Shard 0's notes drive the schedule; sync waits for every shard's step, and with a trace every
  // shard tells of its applies.
  void listen() {
    const auto handles = servers_.handles();
    last_applied_.assign(handles.size(), UINT64_MAX);
    shard_steps_.assign(handles.size(), 0);
    shard_notes_.assign(handles.size(), 0);
    steps_taken_ = 0;
    for (std::size_t i = 0; i < handles.size(); ++i)
      if (i == 0 || hooks_.trace || job_.mode == TrainingMode::sync || handles.size() > 1)
        send(handles[i], listen_atom::value, caf::actor_cast<StepListener>(this), static_cast<std::uint32_t>(i));
  }

  // -- asynchronous: every worker runs its own push/pull loop with the servers, so a gradient goes
  // worker -> server -> worker; the server tells us of each step and we hand out credits (how many more
  // gradients a worker may start): the count, the ssp bound and the end of the run stay here, off the
  // gradient's path. Credits are granted two at a time, up to four ahead of what a worker has had
  // applied (five with cluster.pipeline's second push), so a worker never waits on us and every other
  // note only costs a credit message.
  std::uint64_t credit_window() const { return job_.pipeline ? 5 : 4; }

  void async_start() {
    started_loops_ = true;
    granted_ = summary_.steps;
    listen();
    for (std::size_t k = 0; k < slots_.size(); ++k)
      if (slots_[k].alive) start_loop(k);
    if (summary_.steps >= total_steps_) return finish();
  }

  // How many more gradients worker k may start now: up to the window, within the run's total, and
  // (ssp) only gradients whose index is within the bound of the slowest worker's clock.
  std::uint64_t credits_for(std::size_t k) const {
    if (stopping()) return 0;
    const auto& slot = slots_[k];
    const auto limit = job_.mode == TrainingMode::ssp ? min_clock() + job_.staleness + 1 : UINT64_MAX;
    std::uint64_t credits = 0;
    while (granted_ + credits < total_steps_ && slot.granted + credits - slot.clock < credit_window() &&
           slot.granted + credits < limit)
      ++credits;
    return credits;
  }

  // What credits_for would give with the window's room alone (the run's total and the ssp bound
  // ignored), to tell a worker the bound holds back from one that just has room for one more.
  std::uint64_t credits_for_unbounded(std::size_t k) const {
    const auto& slot = slots_[k];
    return credit_window() - std::min(credit_window(), slot.granted - slot.clock);
  }

  void start_loop(std::size_t k) {
    auto& slot = slots_[k];
    slot.granted = slot.clock;
    const auto credits = credits_for(k);
    slot.granted += credits;
    granted_ += credits;
    slot.in_loop = true;
    slot.last_progress = Clock::now();
    slot.sent_at = steady_now_ns();  // worker timings and trace
    const auto round = ++slot.round;
    request(slot.handle, caf::infinite, train_atom::value, current_, servers_.handles(), credits)
        .then([](bool) {}, [this, k, round](caf::error& error) { loop_failed(k, round, error); });
  }

  void grant(std::size_t k) {
    auto& slot = slots_[k];
    if (!slot.alive || !slot.in_loop) return;
    const auto credits = credits_for(k);
    // One credit alone only when the worker has none left, or the run or the ssp bound leaves no more.
    const bool last = credits == 1 && (slot.granted == slot.clock || credits_for_unbounded(k) > 1);
    if (credits == 0 || (credits == 1 && !last)) return;
    if (slot.granted == slot.clock) slot.last_progress = Clock::now();  // it was idle: its clock starts now
    slot.granted += credits;
    granted_ += credits;
    send(slot.handle, credit_atom::value, credits);
  }

  void grant_all() {
    for (std::size_t k = 0; k < slots_.size(); ++k) grant(k);
  }

  bool any_outstanding() const {
    for (std::size_t k = 0; k < slots_.size(); ++k)
      if (slots_[k].alive && slots_[k].granted > slots_[k].clock) return true;
    return false;
  }

  void async_applied(const StepNote& note) {
    if (finished_ || failed_ || note.worker >= slots_.size()) return;
    const std::size_t k = note.worker;
    auto& slot = slots_[k];
    summary_.samples += note.samples;
    statistics_.record_loss(note.loss);
    ++summary_.gradients_per_worker[k];
    // The server was at note.version - 1 when it applied this gradient.
    statistics_.record_staleness(static_cast<double>(note.version - 1 - note.computed_from), summary_);
    summary_.max_clock_lead = std::max(summary_.max_clock_lead, slot.clock - min_clock());
    ++slot.clock;
    slot.last_progress = Clock::now();
    if (!slot.alive) ++granted_;  // its credits went back when it was lost, yet this gradient came in
    const auto step = summary_.steps++;
    trace_apply(note);
    note_timing(k, note.timing, step, true);  // worker timings and trace
    slot.sent_at = steady_now_ns();
    maybe_evaluate(summary_.steps);
    if (summary_.steps >= total_steps_) return finish();
    // Interrupted or stopped early: no new credits; the run ends once the gradients in flight are in.
    if (stopping()) {
      if (!any_outstanding()) finish();
      return;
    }
    if (checkpoint_due(summary_.steps)) take_checkpoint([] {});
    // This worker first, then the others: the slowest may have moved (ssp), or one lost earlier left
    // its share to them.
    grant(k);
    grant_all();
  }

  void loop_failed(std::size_t k, std::uint64_t round, const caf::error& error) {
    if (round != slots_[k].round || finished_) return;
    // A server refused the worker's gradient (e.g. divergence): the worker relays it in words.
    if (error == caf::sec::runtime_error) return fail_with(error_text(system(), error));
    worker_failed(k, round, error);
  }

  // The driver's own timer. Async/ssp: a worker holding credits that has not been heard of for
  // request_timeout is frozen, and is dropped as a compute request without an answer is in sync mode.
  void watch_workers() {
    if (finished_ || failed_) return;
    // Steps check the interrupt; with every worker lost there are none, so the timer does.
    if (waiting_for_workers_ && interrupted_by() != 0) {
      waiting_for_workers_ = false;
      return finish();
    }
    if (job_.mode == TrainingMode::sync) watch_sync_step();
    if (awaiting_shards_) finish();
    const auto now = Clock::now();
    for (std::size_t k = 0; k < slots_.size() && job_.mode != TrainingMode::sync; ++k) {
      const auto& slot = slots_[k];
      if (slot.alive && slot.in_loop && slot.granted > slot.clock && now - slot.last_progress > job_.request_timeout)
        lose(k, fmt::format("no answer within {} ms", job_.request_timeout.count()));
    }
    delayed_send(this, watch_interval(job_.request_timeout), tick_atom::value);
  }

  // -- worker timings and the trace ------------------------------------------------------------------
  // Every gradient counts for the worker's compute and wait times, a dropped one too (its worker did
  // the work); the trace gets the whole exchange. The exchange's bracket runs from the note of the worker's previous gradient (its weights
  // went out just before) to this one's, which holds the worker's compute for the clock estimate.
  void note_timing(std::size_t k, const WorkTiming& timing, std::uint64_t step, bool used) {
    activity_.record(k, timing);
    if (hooks_.trace)
      hooks_.trace->add(WorkerExchange{static_cast<std::uint32_t>(k), worker_name(k), slots_[k].sent_at,
                                       steady_now_ns(), timing, step, used});
  }

  void trace_span(const std::string& thread, const std::string& name, std::int64_t start, std::uint64_t step) {
    if (hooks_.trace) hooks_.trace->add(TraceSpan{0, "server", thread, name, start, steady_now_ns(), step});
  }

  WorkerStatistics worker_statistics() const {
    auto statistics = summary_.workers;
    statistics.compute_ms_mean = activity_.mean_compute_ms(slots_.size());
    statistics.wait_ms_mean = activity_.mean_wait_ms(slots_.size());
    return statistics;
  }

  // -- checkpoints -----------------------------------------------------------------------------------
  bool checkpoint_due(std::uint64_t done) const {
    return checkpoints_enabled() && job_.checkpoint_every > 0 && done % job_.checkpoint_every == 0;
  }

  bool checkpoints_enabled() const { return static_cast<bool>(hooks_.on_checkpoint); }

  // Collects the server's state and every live worker's stream position, hands them to the hook,
  // then continues with `then`. In sync mode the workers are idle here, so the positions are exact
  // (with backup workers, one still computing a dropped gradient reports the position after it).
  void take_checkpoint(std::function<void()> then) {
    auto checkpoint = std::make_shared<TrainingCheckpoint>();
    checkpoint->iteration = job_.mode == TrainingMode::sync ? iteration_ : summary_.steps;
    on_network_thread_.store(false, std::memory_order_relaxed);  // the answers come to a scheduler thread
    const Countdown done(1 + alive_count(), [this, checkpoint, then] {
      std::sort(checkpoint->workers.begin(), checkpoint->workers.end(),
                [](const WorkerStreamState& a, const WorkerStreamState& b) { return a.worker < b.worker; });
      hooks_.on_checkpoint(*checkpoint);
      on_network_thread_.store(true, std::memory_order_relaxed);
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
    p.workers = worker_statistics();
    p.final = final;
    return p;
  }

  // Index: steps (sync: iterations) done. The last one is left to the final evaluation.
  bool evaluation_due(std::uint64_t index) const {
    const auto last = job_.mode == TrainingMode::sync ? job_.iterations : total_steps_;
    return job_.eval_frequency > 0 && index % job_.eval_frequency == 0 && index < last;
  }

  void maybe_evaluate(std::uint64_t index) {
    if (evaluation_due(index)) evaluate(index);
  }

  void evaluate(std::uint64_t index) {
    // A plain send without a sender: the evaluator's report goes to its callback, not back here.
    if (job_.mode == TrainingMode::sync) return caf::anon_send(evaluator_, evaluate_atom::value, current_, progress(index, false));
    // Async/ssp: the weights live on the servers; the newest are fetched (they may include a step or
    // two more). The servers answer in order, so these reach the evaluator before the final ones.
    servers_.request(
        this, job_.request_timeout,
        [this, progress = progress(index, false)](Weights weights) {
          caf::anon_send(evaluator_, evaluate_atom::value, std::move(weights), progress);
        },
        failure_handler(), weights_atom::value);
  }

  // Sync only (early stopping): the next step waits for this evaluation's verdict.
  void evaluate_then(std::uint64_t index, std::function<void()> next) {
    request(evaluator_, caf::infinite, evaluate_atom::value, current_, progress(index, false))
        .then([next](EvaluationReport&) { next(); }, [this](caf::error& error) { fail("evaluator", error); });
  }

  void event(const std::string& line) {
    if (hooks_.on_event) hooks_.on_event(line);
  }

  // Async with shards: each shard applies its part of a push on its own, so shard 0 may have applied
  // the last gradient before another has.
  bool shards_caught_up() const {
    return std::all_of(shard_steps_.begin(), shard_steps_.end(), [this](std::uint64_t n) { return n >= shard_steps_[0]; });
  }

  // Pipelined sync on shards, at the end of a run: after a signal, pushes sent before the workers heard
  // of the stop feed steps past it, and each shard takes them when it has every worker's push and the
  // others' squares, one shard before another. The run ends at the last step every worker fed
  // (final_steps_; at a planned end, the end itself).
  bool drains_shards() const {
    return job_.mode == TrainingMode::sync && job_.pipeline && shard_steps_.size() > 1 && started_loops_;
  }

  bool shards_behind() const {
    if (job_.mode != TrainingMode::sync) return !shards_caught_up();
    if (!drains_shards()) return false;
    return !final_steps_ || std::any_of(shard_steps_.begin(), shard_steps_.end(),
                                        [this](std::uint64_t n) { return n < *final_steps_; });
  }

  // Asks each worker (after the stop it was told) which step its last push feeds; the smallest, or
  // the stop if that is further (a worker still pushes up to it), is the last step every shard will
  // take. Without answers (every worker lost), the furthest shard's step.
  void find_final_step() {
    asked_final_step_ = true;
    ask_fed([this](const FedRange& fed) {
      const auto first = version_offset_ + hooks_.start_iteration;  // the version this run started from
      const auto furthest = *std::max_element(shard_steps_.begin(), shard_steps_.end());
      const auto last = std::max({fed.smallest, until_ + version_offset_, first});
      final_steps_ = fed.smallest == UINT64_MAX ? furthest : last - first;
      finish();
    });
  }

  void finish() {
    if (finished_ || failed_) return;  // a failed run reports its failure, never a summary
    if (drains_shards() && !asked_final_step_) return find_final_step();
    // The final weights and state are fetched once every shard has applied what shard 0 has (sync
    // pipelined: every step the workers fed); the timer gives up waiting after request_timeout, e.g.
    // when a worker died halfway through a push.
    if (started_loops_ && shards_behind() &&
        (!awaiting_shards_ || Clock::now() - awaiting_since_ < job_.request_timeout)) {
      if (!awaiting_shards_) awaiting_since_ = Clock::now();
      awaiting_shards_ = true;
      return;
    }
    finished_ = true;
    summary_.interrupted_by = interrupted_by();
    summary_.stopped_early = summary_.interrupted_by == 0 && early_stop_requested();
    summary_.training_seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    if (!started_loops_) return finish_with_weights();
    // The servers hold the final weights.
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
    fail_with(fmt::format("{}: {}", who, error_text(system(), error)));
  }

  void fail_with(const std::string& reason) {
    if (failed_) return;
    failed_ = true;
    auto failure = caf::make_error(caf::sec::runtime_error, reason);
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

  // Read by CAF's network thread when a message for the driver arrives (see subtype).
  std::atomic<bool> on_network_thread_{true};
  TrainingJob job_;
  ServerGroup servers_;
  EvaluatorActor evaluator_;
  DriverHooks hooks_;
  WorkerSlots slots_;
  caf::typed_response_promise<TrainingSummary> promise_;
  Weights current_;
  std::uint64_t iteration_ = 0;
  // sync: the stopping point, how the servers' versions run ahead of iteration_ (a resumed run), and
  // how many of the step's gradients shard 0 has told of
  std::uint64_t until_ = 0;
  std::uint64_t step_staleness_ = 0;  // sync: of the step being gathered (pipelined: 1, or 0 after a stop)
  std::uint64_t version_offset_ = 0;
  std::vector<std::uint64_t> shard_steps_;  // steps each shard has told of in this run
  std::vector<std::uint32_t> shard_notes_;  // notes of the step each shard is taking
  std::uint64_t steps_taken_ = 0;           // steps every shard has taken
  std::vector<std::uint64_t> last_applied_;  // each shard's last traced apply
  std::uint64_t granted_ = 0;  // async/ssp: credits handed out in all, applied gradients included
  std::uint64_t total_steps_ = 0;
  RunStatistics statistics_;
  WorkerActivity activity_;
  std::int64_t step_started_ = 0;  // sync: when the step being gathered began, for the trace
  std::uint64_t wait_round_ = 0;
  bool waiting_for_workers_ = false;
  bool started_loops_ = false;
  bool awaiting_shards_ = false;  // finish() waits for the shards to catch up (shards_behind)
  bool asked_final_step_ = false;
  bool settling_stop_ = false;  // pipelined sync: waiting for the workers' word on their last pushes
  bool settled_stop_ = false;   // ... asked once per run
  std::optional<std::uint64_t> final_steps_;  // pipelined sync on shards: steps every shard takes
  Clock::time_point awaiting_since_;  // the workers' push/pull loops run
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
