// A worker process's session once the server has answered its hello: it reaches the shards (dense shard
// processes, or a model's table shards), spawns its one DataWorker, joins the server and serves until the
// server stops it or goes away. Both kinds of model, one path.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "caf/scoped_actor.hpp"
#include "actors/training_job.hpp"
#include "model/data_fingerprint.hpp"
#include "model/dataset.hpp"
#include "model/result.hpp"
#include "model/sparse_dataset.hpp"
#include "transport/remote_client.hpp"

namespace psgrad {

struct WorkerProcessSetup {
  TrainingJob job;  // built from the offer's config
  std::shared_ptr<const Dataset> dense;         // a dense model's training set, or
  std::shared_ptr<const SparseDataset> tables;  // a model with tables' training set
  DataFingerprint fingerprint;  // the training set's; the server refuses a worker whose data differ
  std::string description;      // of the data, for the line that says it joined
  std::string token;
  bool tls = false;
  std::string name;    // this process, for the server's messages (host and pid)
  std::string server;  // HOST:PORT as given, for messages
  std::function<void(const std::string&)> say;
};

// How the session ended: the server's word on the run, or an error; `server_lost`: the error is that the
// server went away while the worker served (the case `work --retry` reconnects after).
struct WorkerProcessEnd {
  Result<RunEnding> ending = Error{"not run"};
  bool server_lost = false;
};

WorkerProcessEnd serve_worker_process(caf::scoped_actor& self, const ServerConnection& connection,
                                      const WorkerProcessSetup& setup);

}  // namespace psgrad
