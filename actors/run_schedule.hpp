// A training mode's schedule behind one interface (sync_schedule, async_schedule), and the driver's
// services it uses: the driver keeps membership, evaluation, checkpoints and the end of the run.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "caf/error.hpp"
#include "actors/interfaces.hpp"
#include "actors/run_statistics.hpp"
#include "actors/server_group.hpp"
#include "actors/training_job.hpp"
#include "actors/worker_slots.hpp"

namespace psgrad {

struct DriverHooks;

// What a schedule may ask of the driver (actors/training_driver.cpp implements it).
class DriverServices {
 public:
  virtual ~DriverServices() = default;
  virtual TrainingDriverActor::base& self() = 0;  // sends and requests go from the driver
  virtual const TrainingJob& job() const = 0;
  virtual const DriverHooks& hooks() const = 0;
  virtual WorkerSlots& slots() = 0;
  virtual ServerGroup& servers() = 0;
  virtual TrainingSummary& summary() = 0;
  virtual RunStatistics& statistics() = 0;
  virtual Weights& current() = 0;  // the weights the run last fetched (sync: of the stopping point)
  // The servers' versions ahead of this run's steps (a resumed run), and where the run started.
  virtual std::uint64_t version_offset() const = 0;
  virtual bool ended() const = 0;     // finished or failed: late answers change nothing
  virtual bool stopping() const = 0;  // a signal or early stopping asks the run to stop
  virtual bool evaluation_due(std::uint64_t index) const = 0;
  virtual bool checkpoint_due(std::uint64_t done) const = 0;
  virtual void evaluate(std::uint64_t index) = 0;
  // The servers' weights an evaluation scores: the weights, or with training.with_averages the optimizer's
  // weight averages.
  virtual void fetch_evaluated(std::function<void(Weights)> then) = 0;
  // Sync with early stopping: the next step waits for the evaluation's verdict.
  virtual void evaluate_then(std::uint64_t index, std::function<void()> next) = 0;
  virtual void take_checkpoint(std::function<void()> then) = 0;
  virtual void finish() = 0;
  virtual void fail(const std::string& who, const caf::error& error) = 0;
  virtual std::function<void(const std::string&, const caf::error&)> failure_handler() = 0;
  virtual void lose(std::size_t worker, const std::string& reason) = 0;
  // A worker's push/pull loop ended with an error (request `round` of its slot).
  virtual void loop_failed(std::size_t worker, std::uint64_t round, const caf::error& error) = 0;
  virtual void note_timing(std::size_t worker, const WorkTiming& timing, std::uint64_t step, bool used) = 0;
  virtual void trace_apply(const StepNote& note) = 0;
  virtual void trace_span(const std::string& thread, const std::string& name, std::int64_t start,
                          std::uint64_t step) = 0;
};

// Which gradients workers compute and when the run stops for evaluations, checkpoints and its end.
class RunSchedule {
 public:
  virtual ~RunSchedule() = default;
  // The first weights are in current(): start every live worker's loop.
  virtual void start() = 0;
  // A server's note of a gradient it took (or dropped).
  virtual void noted(const StepNote& note) = 0;
  // Worker k joined a running job and takes part from now on.
  virtual void joined(std::size_t k) = 0;
  // Worker k was lost (its slot is no longer alive).
  virtual void lost(std::size_t k) = 0;
  // The driver's periodic tick: find frozen workers.
  virtual void watch() = 0;
  // Steps (async) or iterations (sync) done so far: a checkpoint's iteration, the final evaluation's.
  virtual std::uint64_t done() const = 0;
  // What done() counts to at the planned end.
  virtual std::uint64_t total() const = 0;
  // Before the final weights are read: calls `ready` once the schedule knows how far every shard must
  // get (sync pipelined on shards asks the workers); at once otherwise.
  virtual void settle_end(std::function<void()> ready) = 0;
  // Some shard has not yet taken every step it will take.
  virtual bool shards_behind() const = 0;
};

std::unique_ptr<RunSchedule> make_sync_schedule(DriverServices& driver);
std::unique_ptr<RunSchedule> make_async_schedule(DriverServices& driver);

}  // namespace psgrad
