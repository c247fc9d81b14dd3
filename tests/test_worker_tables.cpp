// The DataWorker of a model with embedding tables, on its own: what it tells the driver of the step its
// push feeds, and that it gives up on a table shard that owes an answer too long.
#include <doctest/doctest.h>

#include <optional>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/embedding_shard.hpp"
#include "actors/table_parts.hpp"
#include "actors/data_worker.hpp"
#include "model/sparse_model.hpp"
#include "runtime/error_text.hpp"
#include "tests/sparse_fixtures.hpp"
#include "tests/sparse_shard_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

// One sync sparse worker of job with its dense server and one table shard, at version 0, and weights of
// version 1: the shard holds the worker's pull for them until it has taken a step.
struct WorkerAhead {
  ActorConfig config{2};
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  TrainingJob job;
  std::shared_ptr<const SparseDataset> train = colour_task(64, 1);
  SparseModel model;
  ParameterServerActor server;
  EmbeddingShardActor shard;
  DataWorkerActor worker;
  Weights weights;

  explicit WorkerAhead(TrainingJob run) : job(std::move(run)), model(model_for(job, *train)) {
    auto spawned_servers = spawn_dense_part_servers(system, job, model);
    REQUIRE(spawned_servers.ok());
    REQUIRE(spawned_servers->size() == 1);
    server = spawned_servers->front();
    shard = spawn_table_shards(system, job, model, 1).front();
    DataWorkerSetup setup{job, 0, nullptr};
    setup.tables = WorkerTables{train, {shard}, {}};
    auto spawned = spawn_data_worker(system, std::move(setup));
    REQUIRE(spawned.ok());
    worker = spawned->actor;
    const auto& dense = model.dense();
    weights = Weights{1, dense.layout().hash(), FloatBuffer::copy_of(dense.weights().data(), dense.weights().size())};
  }
  ~WorkerAhead() {
    for (const auto& actor : {caf::actor_cast<caf::actor>(worker), caf::actor_cast<caf::actor>(shard),
                              caf::actor_cast<caf::actor>(server)})
      caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
  }
};

}  // namespace

TEST_CASE("a sync worker of a model with tables whose rows are still out says its push feeds the next version") {
  // A driver settling a stop asks each worker which step its push feeds: a step already started counts,
  // or the tables would take a step the final weights never see.
  WorkerAhead ahead(sparse_job(TrainingMode::sync, 1, 1, 10));
  caf::anon_send(ahead.worker, train_atom::value, ahead.weights, std::vector<ParameterServerActor>{ahead.server},
                 std::uint64_t{0});
  caf::anon_send(ahead.worker, until_atom::value, std::uint64_t{100});
  std::uint64_t fed = 0;
  ahead.self->request(ahead.worker, std::chrono::seconds(10), fed_atom::value)
      .receive([&](std::uint64_t answer) { fed = answer; },
               [&](caf::error& error) { FAIL(error_text(ahead.system, error)); });
  CHECK(fed == 2);
}

TEST_CASE("a worker of a model with tables whose table shard never answers ends its loop naming the shard") {
  // The held pull is never answered: the worker waits three request timeouts (sync), as a dense
  // worker waits for its servers, and ends its loop.
  auto job = sparse_job(TrainingMode::sync, 1, 1, 10);
  job.cluster.request_timeout = std::chrono::milliseconds(100);
  WorkerAhead ahead(job);
  caf::anon_send(ahead.worker, until_atom::value, std::uint64_t{100});
  std::string ended = "no answer";
  // Bounded only to fail rather than hang.
  ahead.self
      ->request(ahead.worker, std::chrono::seconds(30), train_atom::value, ahead.weights,
                std::vector<ParameterServerActor>{ahead.server}, std::uint64_t{0})
      .receive([&](bool) { ended = "finished"; }, [&](caf::error& error) { ended = error_text(ahead.system, error); });
  CAPTURE(ended);
  CHECK(ended.find("table shard 0: no answer within 300 ms") != std::string::npos);
}
