// The sync schedule: every worker computes from the same weights and the servers hold the barrier;
// the driver names the members and moves the stopping point ("until") past which no worker computes.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/countdown.hpp"
#include "actors/run_schedule.hpp"
#include "runtime/steady_time.hpp"
#include "actors/training_driver.hpp"

namespace psgrad {

namespace {

using Clock = std::chrono::steady_clock;

// Each worker runs its own push/pull loop as in async, and the barrier sits on the servers: a step is
// taken once the gradients it needs are in, and answers every one of them with the new weights, so a
// gradient goes worker -> servers -> worker with the driver off its path. The workers compute only
// from weights older than the stopping point, so they wait there with the weights of that step while
// the driver evaluates, checkpoints or ends the run. Shard 0 tells it of every gradient.
class SyncSchedule final : public RunSchedule {
 public:
  explicit SyncSchedule(DriverServices& driver) : driver_(driver), iteration_(driver.hooks().start_iteration) {}

  void start() override {
    listen();
    if (iteration_ >= job().training.iterations || driver_.stopping()) return driver_.finish();
    until_ = next_stop(iteration_);
    step_started_ = steady_now_ns();
    // The servers know their peers and the members before any gradient can reach them.
    introduce_shards([this] {
      update_barrier([this](const std::vector<std::uint32_t>&) {
        for (std::size_t k = 0; k < slots().size(); ++k)
          if (slots()[k].alive) start_loop(k, driver_.current());
      });
    });
  }

  // A worker that joins takes part from the step being gathered: the servers wait for it first, then
  // it gets their current weights.
  void joined(std::size_t k) override {
    update_barrier([this, k](const std::vector<std::uint32_t>&) {
      driver_.servers().request(
          &driver_.self(), job().cluster.request_timeout,
          [this, k](Weights weights) {
            if (slots()[k].alive && !driver_.ended()) start_loop(k, weights);
          },
          driver_.failure_handler(), weights_atom::value);
    });
  }

  void lost(std::size_t) override { update_barrier([](const std::vector<std::uint32_t>&) {}); }

  // Shard 0 tells of every gradient (its statistics come from there); a step is done once every shard
  // has taken it, so that the weights fetched at a stopping point are the step's on every shard.
  void noted(const StepNote& note) override {
    if (driver_.ended() || note.worker >= slots().size() || note.shard >= shard_steps_.size()) return;
    const std::size_t k = note.worker;
    if (note.shard == 0) record(k, note);
    if (note.summed == 0 || ++shard_notes_[note.shard] < note.summed) return;
    // That shard's step is done.
    shard_notes_[note.shard] = 0;
    ++shard_steps_[note.shard];
    driver_.trace_apply(note);
    while (*std::min_element(shard_steps_.begin(), shard_steps_.end()) > steps_taken_) {
      ++steps_taken_;
      if (step_done()) return;
    }
  }

  // A step that has waited longer than request_timeout: the live workers shard 0 holds no gradient of
  // are frozen, and are dropped (the step then goes on without them).
  void watch() override {
    if (iteration_ >= until_) return;
    const auto now = Clock::now();
    bool overdue = false;
    for (const auto& slot : slots())
      overdue = overdue || (slot.alive && slot.in_loop && now - slot.last_progress > job().cluster.request_timeout);
    if (!overdue) return;
    update_barrier([this](const std::vector<std::uint32_t>& waiting) {
      const auto now = Clock::now();
      for (std::size_t k = 0; k < slots().size(); ++k) {
        const auto& slot = slots()[k];
        const bool holds = std::find(waiting.begin(), waiting.end(), k) != waiting.end();
        if (slot.alive && slot.in_loop && !holds && now - slot.last_progress > job().cluster.request_timeout)
          driver_.lose(k, fmt::format("no answer within {} ms", job().cluster.request_timeout.count()));
      }
    });
  }

  std::uint64_t done() const override { return iteration_; }
  std::uint64_t total() const override { return job().training.iterations; }

  // Pipelined sync on shards, at the end of a run: after a signal, pushes sent before the workers heard
  // of the stop feed steps past it, and each shard takes them when it has every worker's push and the
  // others' squares, one shard before another. The run ends at the last step every worker fed: asked
  // of each worker (after the stop it was told) which step its last push feeds; the smallest, or the
  // stop if that is further (a worker still pushes up to it). Without answers (every worker lost), the
  // furthest shard's step.
  void settle_end(std::function<void()> ready) override {
    if (!drains_shards() || final_step_ == FinalStep::known) return ready();
    if (final_step_ == FinalStep::asking) return;  // its answer calls ready
    final_step_ = FinalStep::asking;
    ask_fed([this, ready](const FedRange& fed) {
      const auto first = driver_.version_offset() + driver_.hooks().start_iteration;  // where this run started
      const auto furthest = *std::max_element(shard_steps_.begin(), shard_steps_.end());
      const auto last = std::max({fed.smallest, until_ + driver_.version_offset(), first});
      final_steps_ = fed.smallest == UINT64_MAX ? furthest : last - first;
      final_step_ = FinalStep::known;
      ready();
    });
  }

  bool shards_behind() const override {
    if (!drains_shards()) return false;
    return final_step_ != FinalStep::known || std::any_of(shard_steps_.begin(), shard_steps_.end(),
                                                          [this](std::uint64_t n) { return n < final_steps_; });
  }

 private:
  const TrainingJob& job() const { return driver_.job(); }
  WorkerSlots& slots() { return driver_.slots(); }
  const WorkerSlots& slots() const { return driver_.slots(); }
  TrainingSummary& summary() { return driver_.summary(); }

  bool drains_shards() const { return job().cluster.pipeline && shard_steps_.size() > 1; }

  void record(std::size_t k, const StepNote& note) {
    auto& slot = slots()[k];
    slot.last_progress = Clock::now();
    driver_.note_timing(k, note.timing, iteration_, note.summed > 0);
    slot.sent_at = steady_now_ns();
    if (note.summed == 0) ++summary().workers.dropped[k];
    if (note.summed == 0) return;
    // Pipelined, a step sums gradients from the weights a step older than its own.
    step_staleness_ = std::max(step_staleness_, note.version - 1 - note.computed_from);
    summary().samples += note.samples;
    driver_.statistics().record_loss(note.loss);
    ++summary().gradients_per_worker[k];
  }

  // Every shard tells of its steps: a step is done once all have taken it.
  void listen() {
    const auto handles = driver_.servers().handles();
    shard_steps_.assign(handles.size(), 0);
    shard_notes_.assign(handles.size(), 0);
    steps_taken_ = 0;
    for (std::size_t i = 0; i < handles.size(); ++i)
      driver_.self().send(handles[i], listen_atom::value, caf::actor_cast<StepListener>(&driver_.self()),
                          static_cast<std::uint32_t>(i));
  }

  // How many gradients a step waits for: every live worker's; with backup workers, the first
  // num_workers - backup_workers to arrive (all live workers' when fewer are left).
  std::size_t gradients_needed() const {
    const auto alive = slots().alive_count();
    if (job().cluster.backup_workers == 0) return alive;
    return std::min(alive, job().cluster.num_workers > job().cluster.backup_workers ? job().cluster.num_workers - job().cluster.backup_workers : 1);
  }

  std::vector<std::uint32_t> members() const {
    std::vector<std::uint32_t> alive;
    for (std::size_t k = 0; k < slots().size(); ++k)
      if (slots()[k].alive) alive.push_back(static_cast<std::uint32_t>(k));
    return alive;
  }

  // Tells every server who takes part; `then` gets the workers shard 0 holds a gradient of.
  void update_barrier(std::function<void(const std::vector<std::uint32_t>&)> then) {
    const auto handles = driver_.servers().handles();
    auto waiting = std::make_shared<std::vector<std::uint32_t>>();
    const Countdown done(handles.size(), [waiting, then] { then(*waiting); });
    for (std::size_t i = 0; i < handles.size(); ++i)
      driver_.self()
          .request(handles[i], job().cluster.request_timeout, barrier_atom::value, members(),
                   static_cast<std::uint32_t>(gradients_needed()))
          .then(
              [waiting, done, i](std::vector<std::uint32_t>& held) {
                if (i == 0) *waiting = std::move(held);
                done();
              },
              [this, i](caf::error& error) {
                driver_.fail(driver_.servers().size() == 1 ? "parameter server"
                                                           : fmt::format("parameter server shard {}", i),
                             error);
              });
  }

  // Several shards: each learns every shard and what it holds (their plans), to exchange the sums of
  // squares of each step's summed gradients with those it shares an array with; all have acknowledged
  // before `then`, so no step can start without them, even on remote shards.
  void introduce_shards(std::function<void()> then) {
    if (driver_.servers().size() == 1) return then();
    driver_.servers().prepare(
        &driver_.self(), job().cluster.request_timeout,
        [this, then] {
          const auto& handles = driver_.servers().handles();
          std::vector<ShardPeer> peers;
          for (const auto& handle : handles) peers.push_back(caf::actor_cast<ShardPeer>(handle));
          const Countdown introduced(handles.size(), then);
          for (std::size_t i = 0; i < handles.size(); ++i)
            driver_.self()
                .request(handles[i], job().cluster.request_timeout, peers_atom::value, static_cast<std::uint32_t>(i), peers,
                         driver_.servers().plans())
                .then([introduced](bool) { introduced(); },
                      [this, i](caf::error& error) { driver_.fail(fmt::format("parameter server shard {}", i), error); });
        },
        driver_.failure_handler());
  }

  // The next version the workers stop at: an evaluation (for its exact weights), a checkpoint, the end.
  std::uint64_t next_stop(std::uint64_t from) const {
    for (auto at = from + 1;; ++at)
      if (at >= job().training.iterations || driver_.evaluation_due(at) || driver_.checkpoint_due(at)) return at;
  }

  void start_loop(std::size_t k, const Weights& weights) {
    auto& slot = slots()[k];
    slot.in_loop = true;
    slot.last_progress = Clock::now();
    slot.sent_at = steady_now_ns();
    const auto round = ++slot.round;
    driver_.self()
        .request(slot.handle, caf::infinite, train_atom::value, weights, driver_.servers().handles(), std::uint64_t{0})
        .then([](bool) {}, [this, k, round](caf::error& error) { driver_.loop_failed(k, round, error); });
    driver_.self().send(slot.handle, until_atom::value, until_ + driver_.version_offset());
  }

  // Tells every worker in its loop the stopping point; each one's clock for it starts now.
  void tell_until() {
    for (auto& slot : slots()) {
      slot.last_progress = Clock::now();
      if (slot.alive && slot.in_loop) driver_.self().send(slot.handle, until_atom::value, until_ + driver_.version_offset());
    }
  }

  // True when the run stops here for now (a stopping point or the end).
  bool step_done() {
    driver_.trace_span("driver", "step", step_started_, iteration_);
    step_started_ = steady_now_ns();
    ++summary().steps;
    driver_.statistics().record_staleness(static_cast<double>(step_staleness_), summary());
    step_staleness_ = 0;
    ++iteration_;
    for (auto& other : slots()) other.last_progress = Clock::now();
    if (iteration_ >= until_) {
      if (stop_ != Stop::settling) stop_point();  // else settle_stop goes on from here
      return true;
    }
    // Interrupted or stopped early: the workers stop after the step they are computing.
    if (driver_.stopping() && stop_ == Stop::none) {
      until_ = iteration_ + 1;
      for (auto& other : slots())
        if (other.alive && other.in_loop) driver_.self().send(other.handle, until_atom::value, until_ + driver_.version_offset());
      settle_stop();
    }
    return false;
  }

  // Stopped between stopping points: a worker may have started a step past the new stop before it
  // heard of it (the stop was lowered; pipelined, its push may feed a step past it), and a push no step
  // takes would leave the tables a step ahead of the weights, or its batch unserved on resume. So every
  // worker is asked which step its last push feeds, and all push up to the furthest: each push is
  // applied, and the run ends at that step. A worker asked has heard of the stop (the driver's messages
  // to it keep their order), so it starts no push past it on its own.
  void settle_stop() {
    stop_ = Stop::settling;
    ask_fed([this](const FedRange& fed) {
      stop_ = Stop::settled;
      if (driver_.ended()) return;
      const auto last = fed.furthest > driver_.version_offset() ? fed.furthest - driver_.version_offset() : 0;
      // The question may have taken long: each worker's clock for the raised stop starts now, as at any
      // stop, so a slow answer does not make the next watch tick drop healthy workers.
      if (last > until_) {
        until_ = last;
        tell_until();
      }
      if (iteration_ >= until_) stop_point();
    });
  }

  // Which steps the live workers' last pushes feed: the smallest and the furthest answer (UINT64_MAX and
  // 0 when none answered; a worker lost meanwhile feeds no more steps).
  struct FedRange {
    std::uint64_t smallest = UINT64_MAX;
    std::uint64_t furthest = 0;
  };

  void ask_fed(std::function<void(const FedRange&)> then) {
    auto range = std::make_shared<FedRange>();
    const Countdown answered(1, [range, then] { then(*range); });
    for (auto& slot : slots()) {
      if (!slot.alive) continue;
      answered.add();
      driver_.self()
          .request(slot.handle, job().cluster.request_timeout, fed_atom::value)
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
  void stop_point() {
    if (driver_.stopping() || iteration_ >= job().training.iterations) return driver_.finish();
    auto next = [this] {
      if (driver_.checkpoint_due(iteration_)) driver_.take_checkpoint([this] { go_on(); });
      else go_on();
    };
    if (!driver_.evaluation_due(iteration_)) return next();
    driver_.fetch_evaluated([this, next](Weights weights) {
      driver_.current() = std::move(weights);
      // With early stopping the next step waits for this evaluation's verdict, so a sync run stops
      // at the same step whatever the timing.
      if (job().training.patience > 0) return driver_.evaluate_then(iteration_, next);
      driver_.evaluate(iteration_);
      driver_.current() = Weights{};  // the servers step in place when nobody else holds their weights
      next();
    });
  }

  void go_on() {
    if (driver_.stopping()) return driver_.finish();
    until_ = next_stop(iteration_);
    step_started_ = steady_now_ns();
    tell_until();
  }

  // A stop between stopping points (a signal, early stopping) is settled once per run.
  enum class Stop { none, settling, settled };
  // Pipelined on shards: the last step every shard takes, asked of the workers once at the end.
  enum class FinalStep { unasked, asking, known };

  DriverServices& driver_;
  std::uint64_t iteration_;
  std::uint64_t until_ = 0;           // the stopping point
  std::uint64_t step_staleness_ = 0;  // of the step being gathered (pipelined: 1, or 0 after a stop)
  std::vector<std::uint64_t> shard_steps_;  // steps each shard has told of in this run
  std::vector<std::uint32_t> shard_notes_;  // notes of the step each shard is taking
  std::uint64_t steps_taken_ = 0;           // steps every shard has taken
  std::int64_t step_started_ = 0;           // when the step being gathered began, for the trace
  Stop stop_ = Stop::none;
  FinalStep final_step_ = FinalStep::unasked;
  std::uint64_t final_steps_ = 0;  // once known: steps every shard takes
};

}  // namespace

std::unique_ptr<RunSchedule> make_sync_schedule(DriverServices& driver) {
  return std::make_unique<SyncSchedule>(driver);
}

}  // namespace psgrad
