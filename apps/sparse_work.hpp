// `psgrad work` for a run whose model has embedding tables: a SparseWorker that pulls and pushes rows
// with every table shard process directly.
#pragma once

#include <functional>
#include <string>

#include "caf/scoped_actor.hpp"
#include "io/config.hpp"
#include "model/result.hpp"
#include "transport/remote_client.hpp"

namespace psgrad {

// Loads the config's data (data.path as the server names it, or `data_path` from --data-dir: the file
// on this machine, or a folder holding a file of data.path's name), then serves until the server stops
// the worker; an error, or the ending in the server's words.
Result<RunEnding> serve_sparse_work(caf::scoped_actor& self, const ServerConnection& connection, const Config& config,
                                    const std::string& data_path, const std::string& token, bool tls, const std::string& name,
                                    const std::function<void(const std::string&)>& say);

}  // namespace psgrad
