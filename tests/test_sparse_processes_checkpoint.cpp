// Checkpoints and resume of sparse runs across processes (every table shard and worker in an actor
// system of its own, over loopback): the server gathers each shard process's part into the file one
// process writes, and a resumed run sends each shard process its part of the rows.
#include <doctest/doctest.h>

#include <cstring>
#include <map>
#include <mutex>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "actors/local_training.hpp"
#include "io/checkpoint_file.hpp"
#include "tests/sparse_fixtures.hpp"
#include "tests/sparse_processes.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

using Checkpoints = std::map<std::uint64_t, TrainingCheckpoint>;  // by iteration

// Keeps every checkpoint a run passes on.
std::function<void(const TrainingCheckpoint&)> keep_in(Checkpoints& kept) {
  auto mutex = std::make_shared<std::mutex>();
  return [&kept, mutex](const TrainingCheckpoint& checkpoint) {
    std::lock_guard<std::mutex> lock(*mutex);
    kept[checkpoint.iteration] = checkpoint;
  };
}

const std::string config_text = "# the run's config\n";

TrainedRun train_in_one_process(const TrainingJob& job, std::shared_ptr<const SparseDataset> train,
                                std::shared_ptr<const SparseDataset> dev, Checkpoints* checkpoints) {
  ActorConfig config(2);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  auto run = run_on_columns(std::move(train), std::move(dev));
  if (checkpoints) run.hooks.on_checkpoint = keep_in(*checkpoints);
  run.config = config_text;
  auto summary = train_in_process(system, job, std::move(run));
  REQUIRE_MESSAGE(summary.ok(), (summary.ok() ? "" : summary.error()));
  return std::move(summary).value();
}

std::string failure(const Result<RunEnding>& ending) {
  if (!ending) return ending.error();
  return ending->outcome == RunEnding::Outcome::finished ? std::string() : ending->failure;
}

void check_every_role_finished(const SparseProcessesRun& run) {
  REQUIRE_MESSAGE(run.server.ok(), (run.server.ok() ? "" : run.server.error() + "\n" + run.events));
  for (const auto& shard : run.shards) CHECK(failure(shard) == "");
  for (const auto& worker : run.workers) CHECK(failure(worker) == "");
}

// The bytes of the checkpoint file written from it, but for the wall time it records, which is the
// one thing two runs of the same sync training do not share.
std::string file_bytes(const TrainingCheckpoint& checkpoint) {
  TempFolder folder("sparse-processes-checkpoint");
  const auto path = folder.file("run.ckpt");
  auto timeless = checkpoint;
  timeless.wall_seconds = 0;
  REQUIRE(write_checkpoint(path, timeless).ok());
  return read_file_bytes(path);
}

bool same_bits(const float* a, std::size_t a_size, const float* b, std::size_t b_size) {
  return a_size == b_size && (a_size == 0 || std::memcmp(a, b, a_size * sizeof(float)) == 0);
}

void check_same_end(const TrainedRun& got, const TrainedRun& expected) {
  const auto& a = got.run.final_weights;
  const auto& b = expected.run.final_weights;
  CHECK(a.version == b.version);
  CHECK(same_bits(a.values.data(), a.values.size(), b.values.data(), b.values.size()));
  REQUIRE(got.tables.size() == expected.tables.size());
  for (std::size_t f = 0; f < expected.tables.size(); ++f) {
    CAPTURE(f);
    CHECK(!expected.tables[f].keys.empty());
    CHECK(got.tables[f].keys == expected.tables[f].keys);
    CHECK(same_bits(got.tables[f].values.data(), got.tables[f].values.size(), expected.tables[f].values.data(),
                    expected.tables[f].values.size()));
  }
}

TrainingJob checkpointed_job(std::size_t shards) {
  auto job = sparse_job(TrainingMode::sync, 2, shards, 12);
  job.training.checkpoint_every = 5;
  return job;
}

}  // namespace

TEST_CASE("a sync sparse run across processes writes byte for byte the checkpoints one process writes") {
  const auto train = colour_task(300, 1);
  const auto dev = colour_task(60, 2);
  for (std::size_t shards : {1, 2}) {
    CAPTURE(shards);
    const auto job = checkpointed_job(shards);
    Checkpoints expected;
    train_in_one_process(job, train, dev, &expected);
    Checkpoints got;
    SparseProcessesOptions options{shards};
    options.on_checkpoint = keep_in(got);
    options.config = config_text;
    const auto run = run_sparse_processes(job, train, dev, options);
    check_every_role_finished(run);
    // Every 5 iterations and at the end.
    REQUIRE(expected.size() == 3);
    REQUIRE(got.size() == expected.size());
    for (const auto& [iteration, checkpoint] : expected) {
      CAPTURE(iteration);
      REQUIRE(got.count(iteration) == 1);
      CHECK(got.at(iteration).tables->shards.size() == shards);
      CHECK(table_state_size(got.at(iteration)).rows > 0);
      CHECK(file_bytes(got.at(iteration)) == file_bytes(checkpoint));
    }
  }
}

TEST_CASE("a sync sparse checkpoint resumed across processes on another table shard count ends as the "
          "uninterrupted run, bit for bit") {
  const auto train = colour_task(300, 1);
  const auto dev = colour_task(60, 2);
  const auto whole = train_in_one_process(checkpointed_job(2), train, dev, nullptr);
  Checkpoints first;
  SparseProcessesOptions options{2};
  options.on_checkpoint = keep_in(first);
  options.config = config_text;
  check_every_role_finished(run_sparse_processes(checkpointed_job(2), train, dev, options));
  REQUIRE(first.count(5) == 1);
  // Through its file, as the command line resumes it.
  TempFolder folder("sparse-processes-resume");
  const auto path = folder.file("run.ckpt");
  REQUIRE(write_checkpoint(path, first.at(5)).ok());
  auto loaded = read_checkpoint(path);
  REQUIRE(loaded.ok());
  const auto checkpoint = std::make_shared<const TrainingCheckpoint>(std::move(loaded).value());
  // 64 words a message: every shard's part of the rows comes in many pieces.
  for (std::uint64_t piece_words : {std::uint64_t{64}, std::uint64_t{1} << 22}) {
    for (std::size_t shards : {1, 3}) {
      CAPTURE(piece_words);
      CAPTURE(shards);
      SparseProcessesOptions resumed{shards};
      resumed.resume = checkpoint;
      resumed.resume_piece_words = piece_words;
      Checkpoints later;
      resumed.on_checkpoint = keep_in(later);
      resumed.config = config_text;
      const auto run = run_sparse_processes(checkpointed_job(shards), train, dev, resumed);
      check_every_role_finished(run);
      check_same_end(*run.server, whole);
      CHECK(run.server->run.steps == 7);  // iterations 6 to 12
      // Its own checkpoints continue the count: at 10 and at the end.
      CHECK(later.count(10) == 1);
      CHECK(later.count(12) == 1);
    }
  }
}
