#include "transport/table_shard_reach.hpp"

#include <chrono>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "model/sparse_model.hpp"
#include "model/table_layout.hpp"
#include "payloads/shared_memory.hpp"
#include "runtime/error_text.hpp"
#include "transport/table_shard_routes.hpp"

namespace psgrad {

Result<TableShardReach> reach_table_shards(caf::scoped_actor& self, const ServerConnection& connection,
                                           const TrainingJob& job, std::shared_ptr<const SparseDataset> train,
                                           const std::string& token, bool tls, const std::string& name,
                                           const std::function<void(const std::string&)>& say) {
  auto& system = self->system();
  const auto& offer = connection.offer;
  if (!train) return Error{"no training data"};
  auto model = SparseModel::build_for_data(job.model, *train, "training data");
  if (!model) return Error{model.error()};
  const auto layout = table_layout(*model, job.training.seed);
  // The server answers once every table shard has joined, and refuses a layout other than its own. Asked
  // in slices: a server that goes away meanwhile is noticed by the next ask.
  Result<std::vector<TableShardAddress>> shards = Error{"no answer"};
  const auto asked = std::chrono::steady_clock::now();
  self->monitor(connection.coordinator);
  for (bool answered = false; !answered;) {
    self->request(connection.coordinator, std::chrono::milliseconds(500), table_shards_atom::value, layout,
                  fmt::format("worker {} from {}", offer.worker_index, name))
        .receive(
            [&](std::vector<TableShardAddress>& joined) {
              shards = std::move(joined);
              answered = true;
            },
            [&](caf::error& error) {
              if (error == caf::sec::request_timeout &&
                  (job.cluster.join_timeout.count() == 0 ||
                   std::chrono::steady_clock::now() - asked < job.cluster.join_timeout))
                return;
              shards = Error{"server refused this worker: " + error_text(system, error)};
              answered = true;
            });
    if (!answered)
      self->receive(
          [&](const caf::down_msg& down) {
            if (down.source != connection.coordinator.address()) return;
            shards = Error{"lost the connection to the server before every table shard joined"};
            answered = true;
          },
          caf::after(std::chrono::seconds(0)) >> [] {});
  }
  self->demonitor(connection.coordinator.address());
  if (!shards) return Error{shards.error()};
  if (auto dialled = dial_table_shards(system, *shards, token, tls, say); !dialled) return Error{dialled.error()};
  TableShardReach reach;
  reach.layout_hash = layout.hash();
  reach.tables.train = std::move(train);
  // Table shard processes on this host take the row gradients and answer the rows through shared memory.
  const auto here = job.cluster.shared_memory ? shared_memory_host_identity() : std::string();
  for (const auto& shard : *shards) {
    reach.tables.shards.push_back(shard.shard);
    reach.tables.shards_on_this_host.push_back(!here.empty() && shard.host_identity == here);
    reach.on_this_host += reach.tables.shards_on_this_host.back() ? 1 : 0;
  }
  return reach;
}

}  // namespace psgrad
