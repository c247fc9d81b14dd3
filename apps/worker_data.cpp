#include "apps/worker_data.hpp"

#include <filesystem>

#include "apps/sparse_data.hpp"
#include "io/data_source.hpp"
#include "model/sparse_data_fingerprint.hpp"

namespace psgrad {

namespace {

Result<DataSplit> load_dense(const Config& config, const std::string& data_option) {
  auto source = data_source(config.data);
  if (data_option.empty()) return load_data_shared(source, default_data_dir());
  // Your own files, or a folder of IDX files, stand in for the server's data path; otherwise it holds named sets.
  if (!config.data.path.empty() || load_data_folder(data_option).ok()) {
    source.path = data_option;
    return load_data_shared(source, "");
  }
  return load_data_shared(source, data_option);
}

// The data file on this machine: --data-dir's file, or data.path's file name in --data-dir's folder.
std::string local_data_path(const std::string& server_path, const std::string& data_option) {
  if (data_option.empty()) return server_path;
  std::error_code ignored;
  if (std::filesystem::is_directory(data_option, ignored))
    return (std::filesystem::path(data_option) / std::filesystem::path(server_path).filename()).string();
  return data_option;
}

}  // namespace

Result<WorkerData> load_worker_data(const Config& config, const std::string& data_option) {
  WorkerData data;
  if (is_sparse_model(config)) {
    Config local = config;
    local.data.path = local_data_path(config.data.path, data_option);
    auto split = load_sparse_split(local);
    if (!split) return Error{split.error()};
    data.tables = split->train;
    data.dev_count = split->dev->count;
    data.fingerprint = fingerprint_of(*split->train, split->train->origin);
    data.description = split->description;
    return data;
  }
  auto split = load_dense(config, data_option);
  if (!split) return Error{split.error()};
  data.dense = split->train;
  data.dev_count = split->dev->count;
  data.fingerprint = split->train_fingerprint;
  data.description = split->description;
  return data;
}

}  // namespace psgrad
