// The driver actor's state and the services its schedule uses: workers' slots, checkpoints,
// evaluations, timings and the trace. actors/training_driver.cpp adds its phases and the end of a run;
// no other file includes this one.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/answer_watch.hpp"
#include "actors/countdown.hpp"
#include "actors/run_schedule.hpp"
#include "actors/training_driver.hpp"
#include "actors/worker_activity.hpp"
#include "runtime/error_text.hpp"
#include "runtime/network_thread.hpp"
#include "runtime/steady_time.hpp"

namespace psgrad {

class DriverBase : public TrainingDriverActor::base, protected DriverServices {
 public:
  DriverBase(caf::actor_config& config, TrainingJob job, std::vector<ParameterServerActor> servers,
                 std::vector<DataWorkerActor> workers, EvaluatorActor evaluator, DriverHooks hooks)
      : TrainingDriverActor::base(config),
        job_(std::move(job)),
        servers_(std::move(servers)),
        evaluator_(std::move(evaluator)),
        hooks_(std::move(hooks)) {
    for (std::size_t k = 0; k < workers.size(); ++k) add_slot(k, std::move(workers[k]), name_from_hooks(k));
    summary_.mode = job_.cluster.mode;
    summary_.steps = job_.cluster.mode != TrainingMode::sync ? hooks_.start_iteration : 0;
  }

  // A server's note of a step, or a worker process's message, is handled on the network thread
  // (network_thread.hpp), and so the credit it grants leaves from there. Its handlers are bookkeeping
  // (evaluation runs in the evaluator), except writing a checkpoint: while one is collected the
  // driver stays off the network thread.
  subtype_t subtype() const override {
    return network_thread_subtype(checkpoints_collecting_.load(std::memory_order_relaxed) == 0);
  }

 protected:
  using Clock = std::chrono::steady_clock;

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

  int interrupted_by() const { return hooks_.interrupt ? hooks_.interrupt->load() : 0; }
  bool early_stop_requested() const { return hooks_.stop_early && hooks_.stop_early->load(); }

  void event(const std::string& line) {
    if (hooks_.on_event) hooks_.on_event(line);
  }

  // -- a failed run's workers ----------------------------------------------------------------------
  // Ends every live worker with the failure as its exit reason (a worker process then says why and
  // exits non-zero), and calls `then` once each one's down message came (they are monitored) or the
  // next tick, at most 5 s later, whichever is first.
  void end_workers_then(const caf::error& failure, std::function<void()> then) {
    for (auto& slot : slots_) {
      if (!slot.alive) continue;
      slot.alive = false;
      ending_.push_back(slot.handle.address());
      send_exit(slot.handle, failure);
    }
    after_workers_ended_ = std::move(then);
    if (ending_.empty()) return workers_ended();
    delayed_send(this, std::chrono::seconds(5), tick_atom::value);
  }

  // True when `source` was a worker being ended.
  bool worker_ended(const caf::actor_addr& source) {
    const auto at = std::find(ending_.begin(), ending_.end(), source);
    if (at == ending_.end()) return false;
    ending_.erase(at);
    if (ending_.empty()) workers_ended();
    return true;
  }

  void workers_ended() {
    ending_.clear();
    if (auto then = std::exchange(after_workers_ended_, nullptr)) then();
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
  // Checkpoints kept only for a signal are never periodic: a signal's is taken as the run stops.
  bool checkpoint_due(std::uint64_t done) const override {
    return !hooks_.checkpoints_on_signal_only && checkpoints_enabled() && job_.training.checkpoint_every > 0 &&
           done % job_.training.checkpoint_every == 0;
  }

  bool checkpoints_enabled() const {
    return hooks_.on_checkpoint && (!hooks_.checkpoints_on_signal_only || interrupted_by() != 0);
  }

  // Collects the server's state and every live worker's stream position, hands them to the hook, then
  // continues with `then`. In sync mode the workers are idle here, so the positions are exact (with
  // backup workers, one still computing a dropped gradient reports the position after it). Async
  // checkpoints may overlap: the driver leaves the network thread until the last one is written.
  void take_checkpoint(std::function<void()> then) override {
    auto checkpoint = std::make_shared<TrainingCheckpoint>();
    checkpoint->iteration = done();
    checkpoint->samples = hooks_.start_samples + summary_.samples;
    checkpoint->wall_seconds = hooks_.start_wall_seconds + std::chrono::duration<double>(Clock::now() - start_).count();
    checkpoints_collecting_.fetch_add(1, std::memory_order_relaxed);  // answers come to a scheduler thread
    const Countdown collected(1 + slots_.alive_count(), [this, checkpoint, then] {
      std::sort(checkpoint->workers.begin(), checkpoint->workers.end(),
                [](const WorkerStreamState& a, const WorkerStreamState& b) { return a.worker < b.worker; });
      hooks_.on_checkpoint(*checkpoint);
      last_checkpoint_ = checkpoint->iteration;
      checkpoints_collecting_.fetch_sub(1, std::memory_order_relaxed);
      then();
    });
    servers_.request_state(
        this, job_.cluster.request_timeout,
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
      request(slot.handle, job_.cluster.request_timeout, state_atom::value)
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
    return job_.cluster.mode == TrainingMode::sync ? hooks_.start_iteration : summary_.steps;
  }
  std::uint64_t total() const {
    if (schedule_) return schedule_->total();
    return job_.cluster.mode == TrainingMode::sync ? job_.training.iterations
                                           : job_.training.iterations * std::max<std::size_t>(1, job_.cluster.num_workers);
  }

  TrainingProgress progress(std::uint64_t index, bool final) {
    TrainingProgress p;
    p.iteration = index;
    p.total_iterations = total();
    p.samples = hooks_.start_samples + summary_.samples;
    p.wall_seconds = hooks_.start_wall_seconds + std::chrono::duration<double>(Clock::now() - start_).count();
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
    return job_.evaluation.frequency > 0 && index % job_.evaluation.frequency == 0 && index < total();
  }

  void evaluate(std::uint64_t index) override {
    // A plain send without a sender: the evaluator's report goes to its callback, not back here.
    if (job_.cluster.mode == TrainingMode::sync)
      return caf::anon_send(evaluator_, evaluate_atom::value, current_, progress(index, false));
    // Async/ssp: the weights live on the servers; the newest are fetched (they may include a step or
    // two more). The servers answer in order, so these reach the evaluator before the final ones.
    fetch_evaluated([this, progress = progress(index, false)](Weights weights) {
      caf::anon_send(evaluator_, evaluate_atom::value, std::move(weights), progress);
    });
  }

  void fetch_evaluated(std::function<void(Weights)> then) override {
    if (job_.training.with_averages)
      return servers_.request(this, job_.cluster.request_timeout, std::move(then), failure_handler(),
                              averages_atom::value);
    servers_.request(this, job_.cluster.request_timeout, std::move(then), failure_handler(), weights_atom::value);
  }

  void evaluate_then(std::uint64_t index, std::function<void()> next) override {
    request(evaluator_, caf::infinite, evaluate_atom::value, current_, progress(index, false))
        .then([next](EvaluationReport&) { next(); }, [this](caf::error& error) { fail("evaluator", error); });
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
  std::optional<std::uint64_t> last_checkpoint_;     // the iteration of the last checkpoint handed to the hook
  std::vector<caf::actor_addr> ending_;              // a failed run's workers not yet down
  std::function<void()> after_workers_ended_;
  Outcome outcome_ = Outcome::running;
  Clock::time_point start_;
  TrainingSummary summary_;
};

}  // namespace psgrad
