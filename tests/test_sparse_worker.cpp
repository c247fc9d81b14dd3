// The SparseWorker actor on its own: what it tells the driver of the step its push feeds, and that it
// gives up on a table shard that owes an answer too long.
#include <doctest/doctest.h>

#include <optional>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/embedding_shard.hpp"
#include "actors/sparse_parts.hpp"
#include "actors/sparse_worker.hpp"
#include "model/sparse_model.hpp"
#include "runtime/error_text.hpp"
#include "tests/sparse_fixtures.hpp"
#include "tests/sparse_shard_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

TEST_CASE("a sync sparse worker whose rows are still out says its push feeds the next version") {
  // A driver settling a stop asks each worker which step its push feeds: a step already started counts,
  // or the tables would take a step the final weights never see.
  ActorConfig config(2);
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  const auto job = sparse_job(TrainingMode::sync, 1, 1, 10);
  const auto train = colour_task(64, 1);
  auto model = model_for(job, *train);
  auto server = spawn_dense_server(system, job, model);
  REQUIRE(server.ok());
  const auto shard = spawn_table_shards(system, job, model, 1).front();
  auto worker = spawn_sparse_worker(system, SparseWorkerSetup{job, 0, train, {shard}, std::nullopt});
  REQUIRE(worker.ok());

  // Weights of version 1: the shard, at version 0, holds the worker's pull until it has taken a step.
  const auto& dense = model.dense();
  Weights weights{1, dense.layout().hash(), FloatBuffer::copy_of(dense.weights().data(), dense.weights().size())};
  caf::anon_send(*worker, train_atom::value, weights, std::vector<ParameterServerActor>{*server}, std::uint64_t{0});
  caf::anon_send(*worker, until_atom::value, std::uint64_t{100});
  std::uint64_t fed = 0;
  self->request(*worker, std::chrono::seconds(10), fed_atom::value)
      .receive([&](std::uint64_t answer) { fed = answer; },
               [&](caf::error& error) { FAIL(error_text(system, error)); });
  CHECK(fed == 2);

  for (const auto& actor : {caf::actor_cast<caf::actor>(*worker), caf::actor_cast<caf::actor>(shard),
                            caf::actor_cast<caf::actor>(*server)})
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
}

TEST_CASE("a sparse worker whose table shard never answers ends its loop naming the shard") {
  // The shard, at version 0, holds a pull for the rows of version 1 until a step is taken that never
  // comes: the worker waits three request timeouts (sync), as a dense worker waits for its servers.
  ActorConfig config(2);
  caf::actor_system system{config};
  caf::scoped_actor self{system};
  auto job = sparse_job(TrainingMode::sync, 1, 1, 10);
  job.cluster.request_timeout = std::chrono::milliseconds(100);
  const auto train = colour_task(64, 1);
  auto model = model_for(job, *train);
  auto server = spawn_dense_server(system, job, model);
  REQUIRE(server.ok());
  const auto shard = spawn_table_shards(system, job, model, 1).front();
  auto worker = spawn_sparse_worker(system, SparseWorkerSetup{job, 0, train, {shard}, std::nullopt});
  REQUIRE(worker.ok());

  const auto& dense = model.dense();
  Weights weights{1, dense.layout().hash(), FloatBuffer::copy_of(dense.weights().data(), dense.weights().size())};
  caf::anon_send(*worker, until_atom::value, std::uint64_t{100});
  std::string ended = "no answer";
  // Bounded only to fail rather than hang.
  self->request(*worker, std::chrono::seconds(30), train_atom::value, weights,
                std::vector<ParameterServerActor>{*server}, std::uint64_t{0})
      .receive([&](bool) { ended = "finished"; }, [&](caf::error& error) { ended = error_text(system, error); });
  CAPTURE(ended);
  CHECK(ended.find("table shard 0: no answer within 300 ms") != std::string::npos);

  for (const auto& actor : {caf::actor_cast<caf::actor>(*worker), caf::actor_cast<caf::actor>(shard),
                            caf::actor_cast<caf::actor>(*server)})
    caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
}
