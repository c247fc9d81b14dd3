#include "apps/sparse_work.hpp"

#include "apps/sparse_data.hpp"
#include "model/sparse_data_fingerprint.hpp"
#include "transport/sparse_worker_process.hpp"

namespace psgrad {

Result<RunEnding> serve_sparse_work(caf::scoped_actor& self, const ServerConnection& connection, const Config& config,
                                    const std::string& token, bool tls, const std::string& name,
                                    const std::function<void(const std::string&)>& say) {
  auto data = load_sparse_split(config);
  if (!data) return Error{data.error()};
  SparseWorkerProcessSetup setup;
  setup.job = config;
  setup.train = data->train;
  // The server's checkpoints hold the streams' positions in its training data: a worker's must be the same.
  setup.train_fingerprint = fingerprint_of(*data->train, data->train->origin);
  setup.token = token;
  setup.tls = tls;
  setup.name = name;
  setup.say = say;
  return serve_sparse_worker(self, connection, setup);
}

}  // namespace psgrad
