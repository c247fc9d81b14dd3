#include "runtime/polling_scheduler.hpp"

#include <memory>

#include "caf/actor_system.hpp"
#include "caf/actor_system_config.hpp"
#include "caf/scheduler/coordinator.hpp"
#include "runtime/spin_pause.hpp"

namespace psgrad {

void PollingSharing::enqueue(coordinator_data& data, caf::resumable* job) {
  std::unique_lock<std::mutex> guard(data.lock);
  data.queue.push_back(job);
  data.queued.store(data.queue.size());
  // A polling thread takes the job without a wake-up. A thread that stops polling decrements
  // `polling` before it takes the lock to sleep, so either it finds this job or this reads its exit.
  if (data.queue.size() > data.polling.load()) data.cv.notify_one();
}

caf::resumable* PollingSharing::take_front(coordinator_data& data) {
  auto* job = data.queue.pop_front();
  data.queued.store(data.queue.size());
  return job;
}

caf::resumable* PollingSharing::poll_queue(coordinator_data& data) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + data.poll;
  data.polling.fetch_add(1);
  for (unsigned round = 1;; ++round) {
    if (data.queued.load(std::memory_order_relaxed) > 0) {
      std::unique_lock<std::mutex> guard(data.lock);
      if (!data.queue.empty()) {
        data.polling.fetch_sub(1);
        return take_front(data);
      }
    }
    // Having helped, the thread was busy: its poll starts over.
    if (data.help && data.help->help()) deadline = Clock::now() + data.poll;
    // Reading the clock costs more than a pause: every 32 rounds is well under a microsecond apart.
    if (round % 32 == 0 && Clock::now() >= deadline) break;
    spin_pause();
  }
  data.polling.fetch_sub(1);
  return nullptr;
}

void use_polling_scheduler(caf::actor_system_config& config, std::shared_ptr<const PollSettings> settings) {
  config.module_factories.push_back([settings](caf::actor_system& system) -> caf::actor_system::module* {
    auto coordinator = std::make_unique<caf::scheduler::coordinator<PollingSharing>>(system);
    coordinator->data().poll = settings->poll;
    coordinator->data().help = settings->help;
    return coordinator.release();  // the actor system owns its modules
  });
}

}  // namespace psgrad
