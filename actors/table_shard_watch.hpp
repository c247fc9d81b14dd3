// Watches a sparse run's table shards held by other processes. A shard that goes away ends the run: the
// watch stops the dense part's servers with the loss as the reason, which the training driver treats as
// every lost server (it fails the run), and the evaluator and the workers with it: a worker waiting for
// rows the lost shard would have sent (or another shard holds back for it) would otherwise answer the
// driver only after cluster.request_timeout_ms. It keeps the loss's one line for the run's own error.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "caf/actor_system.hpp"
#include "actors/evaluator.hpp"
#include "actors/interfaces.hpp"

namespace psgrad {

// The first table shard lost, in one line; empty while none is.
class TableShardLoss {
 public:
  void note(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (line_.empty()) line_ = line;
  }
  std::string line() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return line_;
  }

 private:
  mutable std::mutex mutex_;
  std::string line_;
};

// "table shard <index> lost: <why>", why from the reason of its down message.
std::string table_shard_loss_line(caf::actor_system& system, std::size_t index, const caf::error& reason);

// Stop it (an exit message) before the run ends its shards, or their ends count as losses.
caf::actor spawn_table_shard_watch(caf::actor_system& system, std::vector<EmbeddingShardActor> shards,
                                   std::vector<ParameterServerActor> dense_servers, EvaluatorActor evaluator,
                                   std::vector<DataWorkerActor> workers, std::shared_ptr<TableShardLoss> loss);

}  // namespace psgrad
