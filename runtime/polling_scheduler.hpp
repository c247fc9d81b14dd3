// CAF's work-sharing scheduler, except that its queue allocates nothing per scheduled actor and that a
// thread that runs out of work may watch the queue for a short while before it sleeps: on this kind of
// machine a sleeping thread takes 60-95 µs to wake.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "caf/policy/unprofiled.hpp"
#include "caf/resumable.hpp"
#include "caf/scheduler/abstract_coordinator.hpp"
#include "runtime/idle_help.hpp"
#include "runtime/ring_queue.hpp"

namespace psgrad {

// A policy for caf::scheduler::coordinator (the customization points of caf::policy::work_sharing).
// With poll zero it behaves as work sharing, whose std::list allocated a node each time an actor was
// scheduled (one to three per gradient in a local run). Otherwise an idle thread polls for up to `poll`, and
// takes on offered help (IdleHelp) meanwhile; one that enqueues wakes a sleeping thread only when the
// queue holds more jobs than threads are polling.
class PollingSharing : public caf::policy::unprofiled {
 public:
  struct coordinator_data {
    explicit coordinator_data(caf::scheduler::abstract_coordinator*) {}
    RingQueue<caf::resumable*> queue;
    std::mutex lock;
    std::condition_variable cv;
    std::atomic<std::size_t> queued{0};   // queue.size(), readable without the lock
    std::atomic<std::size_t> polling{0};  // threads watching the queue instead of sleeping
    std::chrono::nanoseconds poll{0};
    std::shared_ptr<IdleHelp> help;  // work a polling thread takes on while it waits (may be null)
  };

  struct worker_data {
    explicit worker_data(caf::scheduler::abstract_coordinator*) {}
  };

  template <class Coordinator>
  void central_enqueue(Coordinator* self, caf::resumable* job) {
    enqueue(d(self), job);
  }

  template <class Worker>
  void external_enqueue(Worker* self, caf::resumable* job) {
    enqueue(d(self->parent()), job);
  }

  template <class Worker>
  void internal_enqueue(Worker* self, caf::resumable* job) {
    enqueue(d(self->parent()), job);
  }

  template <class Worker>
  void resume_job_later(Worker* self, caf::resumable* job) {
    enqueue(d(self->parent()), job);
  }

  template <class Worker>
  caf::resumable* dequeue(Worker* self) {
    auto& data = d(self->parent());
    if (data.poll.count() > 0) {
      if (auto* job = poll_queue(data)) return job;
    }
    std::unique_lock<std::mutex> guard(data.lock);
    data.cv.wait(guard, [&] { return !data.queue.empty(); });
    return take_front(data);
  }

  template <class Worker, class UnaryFunction>
  void foreach_resumable(Worker*, UnaryFunction) {}

  template <class Coordinator, class UnaryFunction>
  void foreach_central_resumable(Coordinator* self, UnaryFunction f) {
    auto& data = d(self);
    std::unique_lock<std::mutex> guard(data.lock);
    while (!data.queue.empty()) f(take_front(data));
  }

 private:
  static void enqueue(coordinator_data& data, caf::resumable* job);
  // The first job to arrive within data.poll, or null (then the caller sleeps).
  static caf::resumable* poll_queue(coordinator_data& data);
  // Requires data.lock held and a job queued.
  static caf::resumable* take_front(coordinator_data& data);
};

// How long an idle thread polls (zero: it sleeps at once) and whose offers it takes on meanwhile (may
// be null). Read when the actor system is made.
struct PollSettings {
  std::chrono::microseconds poll{0};
  std::shared_ptr<IdleHelp> help;
};

// Installs this scheduler in `config`, in place of its scheduler.policy.
void use_polling_scheduler(caf::actor_system_config& config, std::shared_ptr<const PollSettings> settings);

}  // namespace psgrad
