// A worker process of a sparse run: after its hello, it asks the server for every table shard (checking
// its tables' layout), dials each, and serves a SparseWorker until the server stops it.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "caf/scoped_actor.hpp"
#include "actors/training_job.hpp"
#include "model/data_fingerprint.hpp"
#include "model/result.hpp"
#include "model/sparse_dataset.hpp"
#include "transport/remote_client.hpp"

namespace psgrad {

struct SparseWorkerProcessSetup {
  TrainingJob job;  // built from the offer's config
  std::shared_ptr<const SparseDataset> train;
  DataFingerprint train_fingerprint;  // empty: the server does not check it
  std::string token;
  bool tls = false;
  std::string name;  // this process, for the server's messages (host and pid)
  std::function<void(const std::string&)> say;
};

// Blocks until the server stops the worker (finished, failed on the server, dropped) or goes away (an error).
Result<RunEnding> serve_sparse_worker(caf::scoped_actor& self, const ServerConnection& connection,
                                      const SparseWorkerProcessSetup& setup);

}  // namespace psgrad
