#include "apps/sparse_work.hpp"

#include <filesystem>

#include "apps/sparse_data.hpp"
#include "model/sparse_data_fingerprint.hpp"
#include "transport/sparse_worker_process.hpp"

namespace psgrad {

namespace {

// The data file on this machine: --data-dir's file, or data.path's file name in --data-dir's folder.
std::string local_data_path(const std::string& server_path, const std::string& data_path) {
  if (data_path.empty()) return server_path;
  std::error_code ignored;
  if (std::filesystem::is_directory(data_path, ignored))
    return (std::filesystem::path(data_path) / std::filesystem::path(server_path).filename()).string();
  return data_path;
}

}  // namespace

Result<RunEnding> serve_sparse_work(caf::scoped_actor& self, const ServerConnection& connection, const Config& config,
                                    const std::string& data_path, const std::string& token, bool tls,
                                    const std::string& name, const std::function<void(const std::string&)>& say) {
  Config local = config;
  local.data.path = local_data_path(config.data.path, data_path);
  auto data = load_sparse_split(local);
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
