#include "transport/sparse_worker_process.hpp"

#include <optional>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/data_worker.hpp"
#include "model/checkpoint_fit.hpp"
#include "model/sparse_model.hpp"
#include "model/table_layout.hpp"
#include "payloads/shared_memory.hpp"
#include "runtime/error_text.hpp"
#include "transport/table_shard_routes.hpp"

namespace psgrad {

Result<RunEnding> serve_sparse_worker(caf::scoped_actor& self, const ServerConnection& connection,
                                      const SparseWorkerProcessSetup& setup) {
  auto& system = self->system();
  const auto& job = setup.job;
  const auto& offer = connection.offer;
  if (!setup.train) return Error{"no training data"};
  auto model = SparseModel::build_for_data(job.model, *setup.train, "training data");
  if (!model) return Error{model.error()};
  const auto layout = table_layout(*model, job.training.seed);
  // The server answers once every table shard has joined, and refuses a layout other than its own. Asked
  // in slices: a server that goes away meanwhile is noticed by the next ask.
  Result<std::vector<TableShardAddress>> shards = Error{"no answer"};
  const auto asked = std::chrono::steady_clock::now();
  self->monitor(connection.coordinator);
  for (bool answered = false; !answered;) {
    self->request(connection.coordinator, std::chrono::milliseconds(500), table_shards_atom::value, layout,
                  fmt::format("worker {} from {}", offer.worker_index, setup.name))
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
  if (auto dialled = dial_table_shards(system, *shards, setup.token, setup.tls, setup.say); !dialled)
    return Error{dialled.error()};
  std::vector<EmbeddingShardActor> handles;
  for (const auto& shard : *shards) handles.push_back(shard.shard);
  std::optional<WorkerStreamState> resume;
  if (offer.resume) resume = offer.stream;
  // The server checked its checkpoint against the same data; a position that still does not fit this
  // worker's data is refused here rather than fault the worker.
  if (resume)
    if (auto problem = stream_misfit(*resume, setup.train->count))
      return Error{fmt::format("the server's resume position does not fit this worker's data: {}", *problem)};
  DataWorkerSetup worker_setup{job, offer.worker_index, nullptr, worker_delay(job, offer.worker_index), resume};
  worker_setup.tables = WorkerTables{setup.train, handles, {}};
  // The server's process on this host takes the dense gradient and answers the weights through shared memory.
  const auto here = job.cluster.shared_memory ? shared_memory_host_identity() : std::string();
  if (!here.empty() && offer.host_identity == here)
    worker_setup.shared_memory_nodes.push_back(connection.coordinator.node());
  // Table shard processes on this host take the row gradients and answer the rows the same way.
  std::size_t shards_here = 0;
  for (const auto& shard : *shards) {
    worker_setup.tables->shards_on_this_host.push_back(!here.empty() && shard.host_identity == here);
    shards_here += worker_setup.tables->shards_on_this_host.back() ? 1 : 0;
  }
  accept_shared_memory(!worker_setup.shared_memory_nodes.empty() || shards_here > 0);
  if (!worker_setup.shared_memory_nodes.empty() && setup.say)
    setup.say("the dense gradient and weights go through shared memory to the server process on this host");
  if (shards_here > 0 && setup.say)
    setup.say(fmt::format("rows go through shared memory to the {} table shard process{} on this host", shards_here,
                          shards_here == 1 ? "" : "es"));
  auto spawned = spawn_data_worker(system, std::move(worker_setup));
  if (!spawned) return Error{spawned.error()};
  auto worker = std::move(spawned->actor);
  JoinRequest request{offer.worker_index, worker, layout.hash(), setup.train->id_fields.size(),
                      setup.train->num_classes(), setup.train->count, setup.name, setup.train_fingerprint};
  auto joined = join_server(self, connection.coordinator, request);
  if (!joined) {
    caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
    return Error{joined.error()};
  }
  if (setup.say)
    setup.say(fmt::format("joined as worker {} of {}, with {} table shards{}", offer.worker_index, offer.num_workers,
                          shards->size(), resume ? ", resuming its data stream" : ""));
  return serve_until_stopped(self, connection.coordinator, worker.address(), std::chrono::seconds(2));
}

}  // namespace psgrad
