// The sparse checkpoint collector: checkpoints passed on in order, and written without holding up the
// driver, whose hook must return at once however long a write takes.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/embedding_shard.hpp"
#include "actors/sparse_checkpoint_collector.hpp"

using namespace psgrad;

TEST_CASE("a checkpoint being written does not hold up the driver's hook for the next one") {
  ActorConfig config{2};
  caf::actor_system system{config};
  EmbeddingShardSetup shard_setup;
  EmbeddingTableSettings table;
  table.width = 2;
  shard_setup.tables.push_back(table);
  shard_setup.mode = TrainingMode::async;
  auto shard = spawn_embedding_shard(system, shard_setup).value();

  std::promise<void> first_writing;
  std::promise<void> release;
  const auto released = release.get_future().share();
  std::atomic<int> written{0};
  std::vector<std::uint64_t> iterations;
  SparseCheckpointSetup setup;
  setup.shards = {shard};
  setup.timeout = std::chrono::seconds(30);
  setup.mode = TrainingMode::async;
  setup.on_checkpoint = [&](const TrainingCheckpoint& checkpoint) {
    iterations.push_back(checkpoint.iteration);
    if (written++ == 0) {
      first_writing.set_value();
      released.wait();  // a slow disk
    }
  };
  SparseCheckpointCollector collector(system, setup);
  const auto hook = collector.hook();
  TrainingCheckpoint dense;
  dense.iteration = 4;
  hook(dense);
  first_writing.get_future().wait();
  dense.iteration = 8;
  auto second = std::async(std::launch::async, [&] { hook(dense); });
  // Bounded only to fail rather than hang: the hook returns as soon as it has queued the gathering.
  const bool returned = second.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
  release.set_value();
  second.wait();
  CHECK(returned);
  CHECK(collector.wait().ok());
  CHECK(written == 2);
  CHECK(iterations == std::vector<std::uint64_t>{4, 8});
  caf::anon_send_exit(shard, caf::exit_reason::user_shutdown);
}
