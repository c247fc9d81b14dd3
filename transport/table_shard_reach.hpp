// How a worker process of a model with embedding tables reaches the table shards: it asks the server for
// every shard's address (with its tables' layout, which the server checks), dials each, and says which are
// processes on this host (their rows go through shared memory).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "caf/scoped_actor.hpp"
#include "actors/worker_rows.hpp"
#include "actors/training_job.hpp"
#include "model/result.hpp"
#include "model/sparse_dataset.hpp"
#include "transport/remote_client.hpp"

namespace psgrad {

struct TableShardReach {
  WorkerTables tables;      // the shards and which are on this host; `train` as given
  std::size_t on_this_host = 0;
  std::uint64_t layout_hash = 0;  // of the tables' layout: a worker of a model with tables joins with it
};

// Blocks until the server names every shard (cluster.join_timeout) or refuses; `name` is this process's, for
// the server's messages; `say` hears about retries.
Result<TableShardReach> reach_table_shards(caf::scoped_actor& self, const ServerConnection& connection,
                                           const TrainingJob& job, std::shared_ptr<const SparseDataset> train,
                                           const std::string& token, bool tls, const std::string& name,
                                           const std::function<void(const std::string&)>& say);

}  // namespace psgrad
