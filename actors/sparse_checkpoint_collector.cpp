#include "actors/sparse_checkpoint_collector.hpp"

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/countdown.hpp"
#include "runtime/error_text.hpp"

namespace psgrad {

struct SparseCheckpointCollector::State {
  SparseCheckpointSetup setup;
  std::mutex mutex;
  std::condition_variable settled;
  std::uint64_t taken = 0;      // checkpoints handed to the hook
  std::uint64_t passed_on = 0;  // of those, passed on or failed, in order
  std::map<std::uint64_t, std::optional<TrainingCheckpoint>> finished;  // by order taken; empty: failed
  std::optional<std::string> failure;
  bool passing_on = false;  // one finisher passes checkpoints on at a time, the others leave theirs to it

  // Passes on, in order, every finished checkpoint whose predecessors are through. The write runs
  // without the lock: the driver's hook takes it, and must not wait for a disk.
  void finish(std::uint64_t sequence, std::optional<TrainingCheckpoint> checkpoint, std::optional<std::string> why) {
    std::unique_lock<std::mutex> lock(mutex);
    if (why && !failure) failure = std::move(why);
    finished.emplace(sequence, std::move(checkpoint));
    if (passing_on) return;
    passing_on = true;
    for (auto it = finished.find(passed_on); it != finished.end(); it = finished.find(passed_on)) {
      auto ready = std::move(it->second);
      finished.erase(it);
      if (ready) {
        lock.unlock();
        setup.on_checkpoint(*ready);
        lock.lock();
      }
      ++passed_on;
      settled.notify_all();
    }
    passing_on = false;
  }
};

SparseCheckpointCollector::SparseCheckpointCollector(caf::actor_system& system, SparseCheckpointSetup setup)
    : system_(&system), state_(std::make_shared<State>()) {
  state_->setup = std::move(setup);
}

std::function<void(const TrainingCheckpoint&)> SparseCheckpointCollector::hook() const {
  return [system = system_, state = state_](const TrainingCheckpoint& dense) {
    std::uint64_t sequence = 0;
    {
      std::lock_guard<std::mutex> lock(state->mutex);
      sequence = state->taken++;
    }
    system->spawn([state, sequence, dense](caf::event_based_actor* self) {
      const auto& setup = state->setup;
      auto checkpoint = std::make_shared<TrainingCheckpoint>();
      *checkpoint = dense;
      checkpoint->data = setup.data;
      checkpoint->config = setup.config;
      checkpoint->tables.emplace();
      checkpoint->tables->row_optimizer = setup.row_optimizer;
      checkpoint->tables->shards.resize(setup.shards.size());
      auto failed = std::make_shared<std::optional<std::string>>();
      const Countdown gathered(setup.shards.size(), [state, sequence, checkpoint, failed] {
        if (*failed) return state->finish(sequence, std::nullopt, *failed);
        state->finish(sequence, std::move(*checkpoint), std::nullopt);
      });
      for (std::size_t s = 0; s < setup.shards.size(); ++s)
        self->request(setup.shards[s], setup.timeout, table_state_atom::value, dense.version)
            .then(
                [checkpoint, s, gathered, async = setup.mode != TrainingMode::sync](ShardTablesState& part) {
                  // Async shards answer with their tables as they are, at least the dense part's steps in:
                  // they resume as at the dense part's version.
                  if (async) part.version = checkpoint->version;
                  checkpoint->tables->shards[s] = std::move(part);
                  gathered();
                },
                [self, failed, gathered, s, iteration = dense.iteration](caf::error& error) {
                  if (!*failed)
                    *failed = fmt::format("checkpoint at iteration {}: table shard {}: {}", iteration, s,
                                          error_text(self->system(), error));
                  gathered();
                });
    });
  };
}

Status SparseCheckpointCollector::wait() const {
  std::unique_lock<std::mutex> lock(state_->mutex);
  state_->settled.wait(lock, [this] { return state_->passed_on == state_->taken; });
  if (state_->failure) return Error{*state_->failure};
  return success();
}

}  // namespace psgrad
