#include "transport/worker_process.hpp"

#include <optional>
#include <vector>

#include <fmt/format.h>

#include "caf/all.hpp"
#include "actors/data_worker.hpp"
#include "model/checkpoint_fit.hpp"
#include "payloads/float_buffer.hpp"
#include "payloads/shared_memory.hpp"
#include "runtime/server_wait.hpp"
#include "transport/shard_listener.hpp"
#include "transport/table_shard_reach.hpp"

namespace psgrad {

namespace {

// The server processes this worker reaches through shared memory: those on this host (the same boot,
// user and namespaces) when the run allows it (cluster.shared_memory).
std::vector<caf::node_id> shared_memory_peers(const TrainingJob& job, const JoinOffer& offer,
                                              const CoordinatorActor& coordinator,
                                              const std::vector<ShardAddress>& shards) {
  std::vector<caf::node_id> peers;
  const auto here = job.cluster.shared_memory ? shared_memory_host_identity() : std::string();
  if (here.empty()) return peers;
  if (offer.host_identity == here) peers.push_back(coordinator.node());
  for (const auto& shard : shards)
    if (shard.host_identity == here) peers.push_back(shard.server.node());
  return peers;
}

}  // namespace

WorkerProcessEnd serve_worker_process(caf::scoped_actor& self, const ServerConnection& connection,
                                      const WorkerProcessSetup& setup) {
  auto& system = self->system();
  const auto& job = setup.job;
  const auto& offer = connection.offer;
  const auto say = [&](const std::string& line) {
    if (setup.say) setup.say(line);
  };
  if (!setup.dense && !setup.tables) return {Error{"no training data"}};
  const std::uint64_t count = setup.dense ? setup.dense->count : setup.tables->count;
  std::optional<WorkerStreamState> resume;
  if (offer.resume) resume = offer.stream;
  // The server checked its checkpoint against the same data; a position that still does not fit
  // this worker's data is refused here rather than abort the worker.
  if (resume)
    if (auto problem = stream_misfit(*resume, count))
      return {Error{fmt::format("the server's resume position does not fit this worker's data: {}", *problem)}};
  DataWorkerSetup worker_setup{job, offer.worker_index, setup.dense, worker_delay(job, offer.worker_index), resume,
                               /*detached=*/false};
  std::vector<ShardAddress> dense_shards;
  std::size_t table_shards_here = 0;
  std::uint64_t table_layout_hash = 0;
  if (setup.tables) {
    // Every table shard, dialled before joining: rows travel between this worker and each shard alone.
    auto reach = reach_table_shards(self, connection, job, setup.tables, setup.token, setup.tls, setup.name, say);
    if (!reach) return {Error{reach.error()}};
    worker_setup.tables = std::move(reach->tables);
    table_shards_here = reach->on_this_host;
    table_layout_hash = reach->layout_hash;
  }
  // The dense arrays' shard processes (of any model), dialled before joining: the run starts only once
  // every worker has, so no gradient of theirs detours through the server's process.
  auto routes = dial_shards(system, connection.coordinator, setup.token, setup.tls, say);
  if (!routes) return {Error{routes.error()}};
  for (const auto& line : routes->lines) say(line);
  dense_shards = std::move(routes->shards);
  worker_setup.shared_memory_nodes = shared_memory_peers(job, offer, connection.coordinator, dense_shards);
  const auto server_silence = std::make_shared<ServerSilence>();
  worker_setup.server_silence = server_silence;
  accept_shared_memory(!worker_setup.shared_memory_nodes.empty() || table_shards_here > 0);
  if (!worker_setup.shared_memory_nodes.empty())
    say(fmt::format("gradients and weights go through shared memory to the {} server process(es) on this host",
                    worker_setup.shared_memory_nodes.size()));
  if (table_shards_here > 0)
    say(fmt::format("rows go through shared memory to the {} table shard process(es) on this host", table_shards_here));
  const auto table_shards = worker_setup.tables ? worker_setup.tables->shards.size() : 0;
  auto worker = spawn_data_worker(system, std::move(worker_setup));
  if (!worker) return {Error{worker.error()}};
  // A dense model's payloads are no larger than its parameters; rows of tables are not float buffers.
  if (setup.dense) limit_payload_floats(worker->parameters);
  const std::uint64_t input_width = setup.dense ? setup.dense->width : setup.tables->id_fields.size();
  const std::uint64_t classes = setup.dense ? setup.dense->num_classes : setup.tables->num_classes();
  // The server checks a model with tables by its tables' layout (their widths, rows and seeds) and dense part.
  const auto layout_hash = setup.tables ? table_layout_hash : worker->layout_hash;
  JoinRequest request{offer.worker_index, worker->actor, layout_hash, input_width,
                      classes,            count,         setup.name,          setup.fingerprint};
  auto joined = join_server(self, connection.coordinator, request);
  if (!joined) {
    caf::anon_send_exit(worker->actor, caf::exit_reason::user_shutdown);
    return {Error{joined.error()}};
  }
  say(fmt::format("joined {} as worker {} of {} (data {}{}{})", setup.server, offer.worker_index, offer.num_workers,
                  setup.description, table_shards > 0 ? fmt::format(", {} table shards", table_shards) : std::string(),
                  offer.resume ? ", resuming its data stream" : ""));
  // The worker's answer to its stop may still be on its way when the worker is gone: the process
  // waits for the server to go away first (it does once it has every answer), as a shard does.
  auto done = serve_until_stopped(self, connection.coordinator, worker->actor.address(), std::chrono::seconds(2),
                                  ServerWaitSetup{job.cluster.server_wait, setup.server, server_silence});
  if (!done) return {Error{done.error()}, true};
  return {std::move(done).value()};
}

}  // namespace psgrad
