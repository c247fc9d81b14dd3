// Checkpoints of sparse runs through the actors: the tables come with their row optimizers' state, a
// sync run resumed from a checkpoint file ends bit for bit as the uninterrupted run on any shard count,
// only touched rows are kept, and a checkpoint that does not fit the run is refused in one line.
#include <doctest/doctest.h>

#include <atomic>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <set>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "actors/local_training.hpp"
#include "io/checkpoint_file.hpp"
#include "model/string_hash.hpp"
#include "payloads/table_state_messages.hpp"
#include "tests/message_bytes.hpp"
#include "tests/sparse_fixtures.hpp"
#include "tests/temp_folder.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

struct Outcome {
  Result<TrainedRun> summary = Error{"not run"};
  std::map<std::uint64_t, TrainingCheckpoint> checkpoints;  // by iteration
};

Outcome run(const TrainingJob& job, std::shared_ptr<const SparseDataset> train,
            std::shared_ptr<const SparseDataset> dev, std::optional<TrainingCheckpoint> resume = std::nullopt,
            const TableOptimizerChoice& tables = {}, std::size_t threads = 2, DriverHooks hooks = {},
            bool checkpoints_on_signal_only = false) {
  ActorConfig config(threads);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  Outcome outcome;
  auto mutex = std::make_shared<std::mutex>();
  auto local = run_on_columns(std::move(train), std::move(dev), tables);
  local.hooks = std::move(hooks);
  local.hooks.on_checkpoint = [&outcome, mutex](const TrainingCheckpoint& checkpoint) {
    std::lock_guard<std::mutex> lock(*mutex);
    outcome.checkpoints[checkpoint.iteration] = checkpoint;
  };
  local.hooks.checkpoints_on_signal_only = checkpoints_on_signal_only;
  local.resume = std::move(resume);
  local.config = "# the run's config\n";
  outcome.summary = train_in_process(system, job, std::move(local));
  return outcome;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

std::vector<float> dense_of(const TrainedRun& summary) {
  const auto& weights = summary.run.final_weights.values;
  return std::vector<float>(weights.data(), weights.data() + weights.size());
}

// The two runs' final dense weights and every table's keys and rows are the same bits.
void check_same_end(const TrainedRun& a, const TrainedRun& b) {
  CHECK(a.run.final_weights.version == b.run.final_weights.version);
  CHECK(same_bits(dense_of(a), dense_of(b)));
  REQUIRE(a.tables.size() == b.tables.size());
  for (std::size_t t = 0; t < a.tables.size(); ++t) {
    CAPTURE(t);
    CHECK(a.tables[t].keys == b.tables[t].keys);
    CHECK(same_bits(a.tables[t].values, b.tables[t].values));
  }
}

// A checkpoint's tables joined over its shards, as one shard would hold them.
std::vector<TableState> whole_tables(const TrainingCheckpoint& checkpoint) {
  return tables_for_shard(checkpoint, 0, 1).value();
}

TrainingJob checkpointed_job(std::size_t shards) {
  auto job = sparse_job(TrainingMode::sync, 2, shards, 12);
  job.training.checkpoint_every = 5;
  return job;
}

}  // namespace

TEST_CASE("a sync sparse run resumed from its checkpoint file ends bit for bit as the uninterrupted run, on any "
          "shard count") {
  const auto train = colour_task(90, 1);
  const auto dev = colour_task(30, 2);
  for (bool adagrad : {false, true}) {
    CAPTURE(adagrad);
    TableOptimizerChoice tables;
    if (adagrad) tables.kind = TableOptimizerKind::adagrad;
    const auto whole = run(checkpointed_job(2), train, dev, std::nullopt, tables);
    REQUIRE_MESSAGE(whole.summary.ok(), (whole.summary.ok() ? "" : whole.summary.error()));
    // Taken every 5 iterations and at the end, each with every shard's part at its step.
    REQUIRE(whole.checkpoints.size() == 3);
    REQUIRE(whole.checkpoints.count(5) == 1);
    const auto& at_5 = whole.checkpoints.at(5);
    CHECK(at_5.version == 5);
    CHECK(at_5.tables->shards.size() == 2);
    CHECK(at_5.tables->row_optimizer == (adagrad ? "Adagrad" : "LazyAdam"));
    CHECK(at_5.workers.size() == 2);
    CHECK(at_5.data.has_value());
    CHECK(at_5.config == "# the run's config\n");

    TempFolder folder("sparse-checkpoint");
    const auto path = folder.file("run.ckpt");
    REQUIRE(write_checkpoint(path, at_5).ok());
    CHECK(checkpoint_has_tables(path));
    for (std::size_t shards : {1, 2, 3}) {
      CAPTURE(shards);
      auto loaded = read_checkpoint(path);
      REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error()));
      const auto resumed = run(checkpointed_job(shards), train, dev, std::move(loaded).value(), tables);
      REQUIRE_MESSAGE(resumed.summary.ok(), (resumed.summary.ok() ? "" : resumed.summary.error()));
      check_same_end(*whole.summary, *resumed.summary);
      // Its own checkpoint at 10 holds the tables and row state the uninterrupted run's did.
      REQUIRE(resumed.checkpoints.count(10) == 1);
      const auto a = whole_tables(whole.checkpoints.at(10));
      const auto b = whole_tables(resumed.checkpoints.at(10));
      REQUIRE(a.size() == b.size());
      for (std::size_t t = 0; t < a.size(); ++t) {
        CHECK(a[t].keys == b[t].keys);
        CHECK(same_bits(a[t].rows, b[t].rows));
        CHECK(same_bits(a[t].state, b[t].state));
        CHECK(a[t].steps == b[t].steps);
      }
      CHECK(resumed.checkpoints.at(10).tables->shards.size() == shards);
    }
  }
}

TEST_CASE("a sparse checkpoint keeps the rows training touched and no other, fewer than the tables' rows") {
  const auto train = colour_task(60, 1);
  const auto dev = colour_task(30, 2, 1000);  // tokens the training set never has
  const auto outcome = run(checkpointed_job(3), train, dev);
  REQUIRE(outcome.summary.ok());
  const auto& last = outcome.checkpoints.rbegin()->second;
  CHECK(last.iteration == 12);
  const auto tables = whole_tables(last);
  std::set<std::uint64_t> dev_only;
  for (std::uint64_t number = 1000; number < 1060; ++number) dev_only.insert(string_hash("token" + std::to_string(number)));
  for (std::size_t t = 0; t < tables.size(); ++t) {
    CHECK(tables[t].keys == outcome.summary->tables[t].keys);
    CHECK(same_bits(tables[t].rows, outcome.summary->tables[t].values));
  }
  // The token table's rows are hashed keys: none of a token only the dev set reads is there.
  std::size_t dev_rows = 0;
  for (auto key : tables[0].keys) dev_rows += dev_only.count(key);
  CHECK(dev_rows == 0);
  CHECK(table_state_size(last).rows == tables[0].size() + tables[1].size());
}

TEST_CASE("an async sparse run checkpoints and resumes into another shard count, to the planned end") {
  const auto train = colour_task(90, 1);
  const auto dev = colour_task(30, 2);
  auto job = sparse_job(TrainingMode::async, 2, 2, 8);
  job.training.checkpoint_every = 6;
  const auto first = run(job, train, dev);
  REQUIRE(first.summary.ok());
  REQUIRE(first.checkpoints.count(6) == 1);
  const auto& at_6 = first.checkpoints.at(6);
  for (const auto& shard : at_6.tables->shards) CHECK(shard.version == at_6.version);
  job.cluster.servers = 3;
  const auto resumed = run(job, train, dev, at_6);
  REQUIRE_MESSAGE(resumed.summary.ok(), (resumed.summary.ok() ? "" : resumed.summary.error()));
  CHECK(resumed.summary->run.steps == first.summary->run.steps);
}

TEST_CASE("a sparse run that keeps checkpoints only for a signal gathers none at its end unless a signal came") {
  const auto train = colour_task(90, 1);
  const auto dev = colour_task(30, 2);
  for (const auto mode : {TrainingMode::sync, TrainingMode::async}) {
    CAPTURE(mode_name(mode));
    auto job = sparse_job(mode, 2, 2, 8);
    job.training.checkpoint_every = 3;
    const auto plain = run(job, train, dev, std::nullopt, {}, 2, {}, true);
    REQUIRE_MESSAGE(plain.summary.ok(), (plain.summary.ok() ? "" : plain.summary.error()));
    CHECK(plain.summary->run.interrupted_by == 0);
    CHECK(plain.checkpoints.empty());
    // Without the flag, the same run gathers one every checkpoint_every steps and one at the end.
    const auto every = run(job, train, dev);
    REQUIRE_MESSAGE(every.summary.ok(), (every.summary.ok() ? "" : every.summary.error()));
    CHECK(every.checkpoints.size() >= 2);
  }
  // A signal before the first step: the run stops at once (async too: no credit goes out, so no step
  // would end it) and its state is gathered for the hook.
  for (const auto mode : {TrainingMode::sync, TrainingMode::async}) {
    CAPTURE(mode_name(mode));
    DriverHooks stopped;
    stopped.interrupt = std::make_shared<std::atomic<int>>(2);
    const auto signalled = run(sparse_job(mode, 2, 2, 8), train, dev, std::nullopt, {}, 2, stopped, true);
    REQUIRE_MESSAGE(signalled.summary.ok(), (signalled.summary.ok() ? "" : signalled.summary.error()));
    CHECK(signalled.summary->run.interrupted_by == 2);
    CHECK(signalled.summary->run.steps == 0);
    CHECK(signalled.checkpoints.size() == 1);
  }
}

TEST_CASE("a sparse checkpoint that is damaged or does not fit the run is refused in one line naming why") {
  const auto train = colour_task(60, 1);
  const auto dev = colour_task(30, 2);
  const auto outcome = run(checkpointed_job(2), train, dev);
  REQUIRE(outcome.summary.ok());
  const auto checkpoint = outcome.checkpoints.at(5);
  const auto refusal = [&](const TrainingJob& job, std::shared_ptr<const SparseDataset> data,
                           const TrainingCheckpoint& resume, const TableOptimizerChoice& tables = {}) {
    const auto resumed = run(job, data, dev, resume, tables);
    REQUIRE_FALSE(resumed.summary.ok());
    CHECK(resumed.summary.error().find('\n') == std::string::npos);
    return resumed.summary.error();
  };
  TableOptimizerChoice adagrad;
  adagrad.kind = TableOptimizerKind::adagrad;
  CHECK(refusal(checkpointed_job(2), train, checkpoint, adagrad).find("LazyAdam") != std::string::npos);
  CHECK(refusal(checkpointed_job(2), colour_task(60, 7), checkpoint).find("differs") != std::string::npos);
  auto wider = checkpointed_job(2);
  wider.model.settings["embedding_widths"] = std::vector<std::int64_t>{6, 4};
  CHECK(refusal(wider, train, checkpoint).find("width") != std::string::npos);
  auto missing_shard = checkpoint;
  missing_shard.tables->shards.pop_back();
  CHECK(refusal(checkpointed_job(2), train, missing_shard).find("shard") != std::string::npos);

  TempFolder folder("sparse-checkpoint-damaged");
  const auto path = folder.file("run.ckpt");
  REQUIRE(write_checkpoint(path, checkpoint).ok());
  auto bytes = read_file_bytes(path);
  auto flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x20;
  write_file_bytes(path, flipped);
  const auto damaged = read_checkpoint(path);
  REQUIRE_FALSE(damaged.ok());
  CHECK(damaged.error().find(path) == 0);
  CHECK(damaged.error().find("checksum") != std::string::npos);
  write_file_bytes(path, bytes.substr(0, bytes.size() / 3));
  CHECK(read_checkpoint(path).error().find("corrupt") != std::string::npos);
  write_file_bytes(path, "PSGRSPCK and more");
  CHECK(read_checkpoint(path).error().find("checkpoint is truncated or corrupt") != std::string::npos);
  write_file_bytes(path, "something else");
  CHECK(read_checkpoint(path).error().find("not a psgrad checkpoint") != std::string::npos);
}

TEST_CASE("a shard's section decodes to the part it encodes, and refuses another section's bytes") {
  const auto train = colour_task(40, 1);
  const auto outcome = run(checkpointed_job(2), train, colour_task(10, 2));
  REQUIRE(outcome.summary.ok());
  const auto& part = outcome.checkpoints.at(5).tables->shards[1];
  const auto bytes = encode_shard_tables(part);
  const auto decoded = decode_shard_tables(bytes, "shard 1");
  REQUIRE(decoded.ok());
  CHECK(decoded->index == 1);
  CHECK(decoded->count == 2);
  CHECK(decoded->version == part.version);
  REQUIRE(decoded->tables.size() == part.tables.size());
  for (std::size_t t = 0; t < part.tables.size(); ++t) {
    CHECK(decoded->tables[t].keys == part.tables[t].keys);
    CHECK(same_bits(decoded->tables[t].state, part.tables[t].state));
  }
  CHECK(decode_shard_tables(bytes.substr(0, bytes.size() - 1), "shard 1").error().find("shard 1") == 0);
}

TEST_CASE("a shard's checkpoint answer round-trips through CAF's binary serializer, bits and all") {
  ActorConfig config(1);
  caf::actor_system system{config};
  TableState table;
  table.width = 2;
  table.state_width = 4;
  table.keys = {4, 10};
  table.rows = {1.5f, -0.0f, std::numeric_limits<float>::denorm_min(), 7.0f};
  table.state = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, std::numeric_limits<float>::infinity()};
  table.steps = {3, 0xffffffffffffffffull};
  ShardTablesState part{1, 2, 17, {table, TableState{}}};
  ShardTablesState back;
  REQUIRE_FALSE(deserialize(system, serialize(system, part), back));
  CHECK(back.index == 1);
  CHECK(back.count == 2);
  CHECK(back.version == 17);
  REQUIRE(back.tables.size() == 2);
  CHECK(back.tables[0].width == 2);
  CHECK(back.tables[0].state_width == 4);
  CHECK(back.tables[0].keys == table.keys);
  CHECK(same_bits(back.tables[0].rows, table.rows));
  CHECK(same_bits(back.tables[0].state, table.state));
  CHECK(back.tables[0].steps == table.steps);
  CHECK(back.tables[1].keys.empty());
}
