// The async/ssp schedule: every worker runs its own push/pull loop with the servers, so a gradient goes
// worker -> server -> worker; the server tells the driver of each step and the driver hands out credits.
#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/run_schedule.hpp"
#include "runtime/steady_time.hpp"
#include "actors/training_driver.hpp"
#include "model/checked_count.hpp"

namespace psgrad {

namespace {

using Clock = std::chrono::steady_clock;

// Credits say how many more gradients a worker may start: the count, the ssp bound and the end of the
// run stay here, off the gradient's path. They are granted two at a time, up to four ahead of what a
// worker has had applied (five with cluster.pipeline's second push), so a worker never waits on the
// driver and every other note only costs a credit message.
class AsyncSchedule final : public RunSchedule {
 public:
  explicit AsyncSchedule(DriverServices& driver)
      // A total past 64 bits saturates rather than wraps to a small one (the config bounds it well below).
      : driver_(driver),
        total_steps_(saturating_product(driver.job().training.iterations, std::max<std::size_t>(1, driver.job().cluster.num_workers))) {}

  void start() override {
    granted_ = summary().steps;
    listen();
    for (std::size_t k = 0; k < slots().size(); ++k)
      if (slots()[k].alive) start_loop(k);
    if (summary().steps >= total_steps_) return driver_.finish();
    // Stopped before the first step (a signal as the workers joined): no credit went out, so no note
    // will come to end the run.
    if (driver_.stopping() && !any_outstanding()) return driver_.finish();
  }

  void joined(std::size_t k) override { start_loop(k); }

  void lost(std::size_t k) override {
    auto& slot = slots()[k];
    granted_ -= slot.granted - slot.clock;  // its unfinished credits go to the others
    slot.granted = slot.clock;
    // The slowest may have been the lost one: workers waiting on it can go on (ssp).
    if (slots().alive_count() == 0) return;
    if (driver_.stopping() && !any_outstanding()) return driver_.finish();
    take_waiting_checkpoint();
    grant_all();
  }

  // Only shard 0's notes drive the schedule; the others say how far each shard is.
  void noted(const StepNote& note) override {
    if (note.shard < shard_steps_.size()) ++shard_steps_[note.shard];
    if (note.shard != 0) {
      driver_.trace_apply(note);
      return take_waiting_checkpoint();
    }
    if (driver_.ended() || note.worker >= slots().size()) return;
    const std::size_t k = note.worker;
    auto& slot = slots()[k];
    summary().samples += note.samples;
    driver_.statistics().record_loss(note.loss);
    ++summary().gradients_per_worker[k];
    // The server was at note.version - 1 when it applied this gradient.
    driver_.statistics().record_staleness(static_cast<double>(note.version - 1 - note.computed_from), summary());
    // A lost worker's late gradient can come from behind the slowest live worker's clock.
    const auto slowest = slots().min_clock();
    summary().max_clock_lead = std::max(summary().max_clock_lead, slot.clock > slowest ? slot.clock - slowest : 0);
    ++slot.clock;
    slot.last_progress = Clock::now();
    if (!slot.alive) ++granted_;  // its credits went back when it was lost, yet this gradient came in
    const auto step = summary().steps++;
    driver_.trace_apply(note);
    driver_.note_timing(k, note.timing, step, true);  // worker timings and trace
    slot.sent_at = steady_now_ns();
    if (driver_.evaluation_due(summary().steps)) driver_.evaluate(summary().steps);
    if (summary().steps >= total_steps_) return driver_.finish();
    // Interrupted or stopped early: no new credits; the run ends once the gradients in flight are in.
    if (driver_.stopping()) {
      if (!any_outstanding()) driver_.finish();
      return;
    }
    if (driver_.checkpoint_due(summary().steps) && !checkpoint_waiting_) {
      if (shard_steps_.size() <= 1) driver_.take_checkpoint([] {});
      else checkpoint_waiting_ = true;
    }
    take_waiting_checkpoint();
    // This worker first, then the others: the slowest may have moved (ssp), or one lost earlier left
    // its share to them.
    grant(k);
    grant_all();
  }

  // A worker holding credits that has not been heard of for request_timeout is frozen, and is dropped
  // as a compute request without an answer is in sync mode.
  void watch() override {
    const auto now = Clock::now();
    for (std::size_t k = 0; k < slots().size(); ++k) {
      const auto& slot = slots()[k];
      if (slot.alive && slot.in_loop && slot.granted > slot.clock && now - slot.last_progress > job().cluster.request_timeout)
        driver_.lose(k, fmt::format("no answer within {} ms", job().cluster.request_timeout.count()));
    }
  }

  std::uint64_t done() const override { return driver_.summary().steps; }
  std::uint64_t total() const override { return total_steps_; }
  void settle_end(std::function<void()> ready) override { ready(); }

  // With shards each applies its part of a push on its own, so shard 0 may have applied the last
  // gradient before another has.
  bool shards_behind() const override {
    return !std::all_of(shard_steps_.begin(), shard_steps_.end(),
                        [this](std::uint64_t n) { return n >= shard_steps_[0]; });
  }

 private:
  const TrainingJob& job() const { return driver_.job(); }
  WorkerSlots& slots() { return driver_.slots(); }
  TrainingSummary& summary() { return driver_.summary(); }
  std::uint64_t credit_window() const { return job().cluster.pipeline ? 5 : 4; }

  // Shard 0's notes drive the schedule; with several shards, or a trace, every shard tells of its applies.
  void listen() {
    const auto handles = driver_.servers().handles();
    shard_steps_.assign(handles.size(), 0);
    for (std::size_t i = 0; i < handles.size(); ++i)
      if (i == 0 || driver_.hooks().trace || handles.size() > 1)
        driver_.self().send(handles[i], listen_atom::value, caf::actor_cast<StepListener>(&driver_.self()),
                            static_cast<std::uint32_t>(i));
  }

  // How many more gradients worker k may start now: up to the window, within the run's total, and
  // (ssp) only gradients whose index is within the bound of the slowest worker's clock.
  std::uint64_t credits_for(std::size_t k) {
    if (driver_.stopping() || checkpoint_waiting_) return 0;
    const auto& slot = slots()[k];
    const auto limit = job().cluster.mode == TrainingMode::ssp ? slots().min_clock() + job().cluster.staleness + 1 : UINT64_MAX;
    const auto cap = credit_cap();
    std::uint64_t credits = 0;
    while (granted_ + credits < cap && slot.granted + credits - slot.clock < credit_window() &&
           slot.granted + credits < limit)
      ++credits;
    return credits;
  }

  // What credits_for would give with the window's room alone (the run's total and the ssp bound
  // ignored), to tell a worker the bound holds back from one that just has room for one more.
  std::uint64_t credits_for_unbounded(std::size_t k) {
    const auto& slot = slots()[k];
    return credit_window() - std::min(credit_window(), slot.granted - slot.clock);
  }

  void start_loop(std::size_t k) {
    auto& slot = slots()[k];
    slot.granted = slot.clock;
    const auto credits = credits_for(k);
    slot.granted += credits;
    granted_ += credits;
    slot.in_loop = true;
    slot.last_progress = Clock::now();
    slot.sent_at = steady_now_ns();  // worker timings and trace
    const auto round = ++slot.round;
    driver_.self()
        .request(slot.handle, caf::infinite, train_atom::value, driver_.current(), driver_.servers().handles(), credits)
        .then([](bool) {}, [this, k, round](caf::error& error) { driver_.loop_failed(k, round, error); });
  }

  void grant(std::size_t k) {
    auto& slot = slots()[k];
    if (!slot.alive || !slot.in_loop) return;
    const auto credits = credits_for(k);
    // One credit alone only when the worker has none left, or the run or the ssp bound leaves no more.
    const bool last = credits == 1 && (slot.granted == slot.clock || credits_for_unbounded(k) > 1);
    if (credits == 0 || (credits == 1 && !last)) return;
    if (slot.granted == slot.clock) slot.last_progress = Clock::now();  // it was idle: its clock starts now
    slot.granted += credits;
    granted_ += credits;
    driver_.self().send(slot.handle, credit_atom::value, credits);
  }

  void grant_all() {
    for (std::size_t k = 0; k < slots().size(); ++k) grant(k);
  }

  // How many gradients may be granted in all: the run's total; with several shards and periodic
  // checkpoints no more than the next checkpoint's step, so that the checkpoint lands on it.
  std::uint64_t credit_cap() {
    const auto every = job().training.checkpoint_every;
    if (shard_steps_.size() <= 1 || every == 0) return total_steps_;
    const auto next = (summary().steps / every + 1) * every;
    return driver_.checkpoint_due(next) ? std::min(total_steps_, next) : total_steps_;
  }

  // Several shards each apply their part of a push on their own, so at any moment one may have applied
  // a gradient another has not, and their states would not join into one checkpoint. A checkpoint
  // due waits, with no credits handed out, until every shard has applied every gradient granted (no more
  // than up to its step: credit_cap); then it is taken and the credits flow again. One server's state is
  // always whole: it is taken at once.
  void take_waiting_checkpoint() {
    if (!checkpoint_waiting_ || any_outstanding() || shards_behind()) return;
    checkpoint_waiting_ = false;
    driver_.take_checkpoint([this] { grant_all(); });
  }

  bool any_outstanding() {
    for (const auto& slot : slots())
      if (slot.alive && slot.granted > slot.clock) return true;
    return false;
  }

  DriverServices& driver_;
  const std::uint64_t total_steps_;
  std::uint64_t granted_ = 0;  // credits handed out in all, applied gradients included
  std::vector<std::uint64_t> shard_steps_;  // steps each shard has told of in this run
  bool checkpoint_waiting_ = false;  // a checkpoint is due and waits for the shards to agree
};

}  // namespace

std::unique_ptr<RunSchedule> make_async_schedule(DriverServices& driver) {
  return std::make_unique<AsyncSchedule>(driver);
}

}  // namespace psgrad
