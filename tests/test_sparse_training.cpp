// Sparse models trained through the actors: sync is one plain loop's step whatever the shards and threads,
// async learns, only touched rows exist, and the row messages are the size of the keys they carry.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "actors/row_router.hpp"
#include "actors/table_parts.hpp"
#include "model/aligned_floats.hpp"
#include "model/embedding_table.hpp"
#include "model/row_gradient_sum.hpp"
#include "model/sparse_batcher.hpp"
#include "model/sparse_model.hpp"
#include "model/table_optimizer.hpp"
#include "tests/message_bytes.hpp"
#include "tests/sparse_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

TrainedRun train_sparse(const TrainingJob& job, std::shared_ptr<const SparseDataset> train,
                        std::shared_ptr<const SparseDataset> dev, std::size_t threads,
                                   ReportCallback on_report = nullptr) {
  ActorConfig config(threads);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  // A failed run says what its workers met on the way.
  auto events = std::make_shared<std::string>();
  DriverHooks hooks;
  hooks.on_event = [events](const std::string& line) { *events += line + "\n"; };
  auto run = run_on_columns(std::move(train), std::move(dev));
  run.on_report = std::move(on_report);
  run.hooks = hooks;
  auto summary = train_in_process(system, job, std::move(run));
  REQUIRE_MESSAGE(summary.ok(), (summary.ok() ? "" : summary.error() + "\n" + *events));
  return std::move(summary).value();
}

std::vector<float> floats_of(const FloatBuffer& buffer) {
  return std::vector<float>(buffer.data(), buffer.data() + buffer.size());
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// What sync means, without actors: every worker's gradient from the same weights and rows, the dense
// gradients summed in worker order, each table's row gradients summed per key in worker order, one step.
struct PlainRun {
  std::vector<float> dense;
  std::vector<EmbeddingTable> tables;
};

// Called before the first step and after each with the number of steps taken, the dense weights and the
// tables.
using AfterStep = std::function<void(std::uint64_t, const AlignedFloats&, const std::vector<EmbeddingTable>&)>;

// Pipelined (cluster.pipeline), each step after the first computes from the weights and rows before the
// step before it, as a worker with two pushes out does.
PlainRun plain_sync_loop(const TrainingJob& job, std::shared_ptr<const SparseDataset> data,
                         const AfterStep& after_step = nullptr, bool pipelined = false) {
  auto model = SparseModel::build_for_data(job.model.architecture, job.model.settings, *data, "data").value();
  model.dense().initialize(derive_seed(job.training.seed, RandomStream::initial_weights));
  AlignedFloats weights(model.dense().weights().begin(), model.dense().weights().end());
  auto optimizer = std::move(build_optimizer(job, model.dense().layout()).value());
  PlainRun run;
  std::vector<std::unique_ptr<RowOptimizer>> row_optimizers;
  for (std::size_t f = 0; f < model.fields().size(); ++f) {
    EmbeddingTableSettings settings;
    settings.width = model.fields()[f].width;
    settings.init_seed = embedding_init_seed(job.training.seed, f);
    run.tables.emplace_back(settings);
    row_optimizers.push_back(std::move(build_row_optimizer({}, job.optimizer, settings.width).value()));
  }
  std::vector<SparseBatcher> batches;
  std::vector<Random> dropout;
  for (std::size_t k = 0; k < job.cluster.num_workers; ++k) {
    batches.emplace_back(data, job.training.batch_size, worker_data_seed(job.training.seed, k));
    dropout.emplace_back(worker_dropout_seed(job.training.seed, k));
  }
  AlignedFloats gradient(weights.size()), sum(weights.size());
  if (after_step) after_step(0, weights, run.tables);
  AlignedFloats before_weights = weights;  // pipelined: the state before the last step
  auto before_tables = run.tables;
  for (std::uint64_t i = 0; i < job.training.iterations; ++i) {
    const auto& from_weights = pipelined ? before_weights : weights;
    auto& from_tables = pipelined ? before_tables : run.tables;  // a pull makes the rows it reads
    std::vector<std::vector<SparseRows>> row_gradients(job.cluster.num_workers);
    for (std::size_t k = 0; k < job.cluster.num_workers; ++k) {
      const auto batch = batches[k].next();
      const auto lookup = model.look_up(batch.fields, batch.numbers).value();
      std::vector<SparseRows> rows;
      for (std::size_t f = 0; f < run.tables.size(); ++f)
        rows.push_back(from_tables[f].pull(lookup.fields[f].keys).value());
      model.compute_gradients(from_weights.data(), gradient.data(), lookup, rows,
                              ConstMatrixMap(batch.targets.data(), batch.targets.rows(), batch.targets.cols()),
                              dropout[k], row_gradients[k]);
      for (std::size_t j = 0; j < sum.size(); ++j) sum[j] = k == 0 ? gradient[j] : sum[j] + gradient[j];
    }
    if (pipelined) {
      before_weights = weights;
      before_tables = run.tables;
    }
    optimizer->apply_gradients(weights.data(), sum.data());
    for (std::size_t f = 0; f < run.tables.size(); ++f) {
      std::vector<const SparseRows*> in_worker_order;
      for (const auto& worker : row_gradients) in_worker_order.push_back(&worker[f]);
      REQUIRE(run.tables[f].apply(sum_row_gradients(in_worker_order), *row_optimizers[f]).ok());
    }
    if (after_step) after_step(i + 1, weights, run.tables);
  }
  run.dense.assign(weights.begin(), weights.end());
  return run;
}

// A table's rows as the shards hand them back: keys ascending.
SparseRows rows_of(const EmbeddingTable& table) {
  SparseRows rows(table.keys(), table.width());
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::copy(table.find(rows.keys[i]), table.find(rows.keys[i]) + table.width(), rows.row(i));
  return rows;
}

// The run ended with the plain loop's dense weights and every table's rows, bit for bit.
void check_same_as_plain(const TrainedRun& summary, const PlainRun& plain) {
  CHECK(same_bits(floats_of(summary.run.final_weights.values), plain.dense));
  REQUIRE(summary.tables.size() == plain.tables.size());
  for (std::size_t f = 0; f < plain.tables.size(); ++f) {
    CAPTURE(f);
    const auto expected = rows_of(plain.tables[f]);
    CHECK(summary.tables[f].keys == expected.keys);
    CHECK(same_bits(summary.tables[f].values, expected.values));
  }
}

}  // namespace

TEST_CASE("sync sparse runs are one plain loop's steps, bit for bit, on 1, 2 and 4 shards and 1 and 2 threads") {
  const auto data = colour_task(200, 11);
  auto job = sparse_job(TrainingMode::sync, 2, 1, 12);
  // Every step clips, dense arrays and tables alike: a table's clip norm then needs every shard's squares.
  job.optimizer.settings["grad_clip"] = 0.01;
  // Stopping points where the evaluator reads the rows of the step it scores while the workers go on.
  job.evaluation.frequency = 4;
  const auto plain = plain_sync_loop(job, data);
  for (std::size_t shards : {1, 2, 4}) {
    for (std::size_t threads : {1, 2}) {
      CAPTURE(shards);
      CAPTURE(threads);
      job.cluster.servers = shards;
      const auto summary = train_sparse(job, data, data, threads);
      CHECK(summary.run.final_weights.version == 12);
      check_same_as_plain(summary, plain);
    }
  }
}

TEST_CASE("a model with tables cuts its dense part over cluster.servers server shards, and sync stays the plain loop's steps, bit for bit") {
  const auto data = colour_task(200, 13);
  auto job = sparse_job(TrainingMode::sync, 2, 1, 10);
  // A dense part of about 30k floats, enough for 3 shards of the balanced slicer; every step clips, so
  // an array cut between shards needs their sums of squares.
  job.model.settings["hidden_width"] = std::int64_t{2048};
  job.optimizer.settings["grad_clip"] = 0.01;
  job.evaluation.frequency = 5;
  const auto model = SparseModel::build_for_data(job.model, *data, "data");
  REQUIRE(model.ok());
  const auto plain = plain_sync_loop(job, data);
  for (std::size_t shards : {2, 3}) {
    CAPTURE(shards);
    job.cluster.servers = shards;
    CHECK(dense_part_shards(job, model->dense().layout()) == shards);
    const auto summary = train_sparse(job, data, data, 2);
    CHECK(summary.run.final_weights.version == 10);
    check_same_as_plain(summary, plain);
  }
  // The small model's dense part cannot be cut in 16: it takes as many shards as it can be cut into, and
  // the shards beyond those hold only table keys.
  auto small = sparse_job(TrainingMode::sync, 2, 16, 10);
  const auto small_model = SparseModel::build_for_data(small.model, *data, "data");
  REQUIRE(small_model.ok());
  const auto& layout = small_model->dense().layout();
  CHECK_FALSE(server_shard_cuts(small, layout, 16).ok());
  const auto taken = dense_part_shards(small, layout);
  CHECK(taken > 1);
  CHECK(taken < 16);
  CHECK(server_shard_cuts(small, layout, taken).ok());
}

TEST_CASE("sync sparse runs with number columns are one plain loop's steps, bit for bit, on 1, 2 and 4 shards") {
  for (const std::string numbers : {"as_is", "log1p"}) {
    CAPTURE(numbers);
    const auto data = with_numbers(colour_task(200, 11), 12);
    auto job = sparse_job(TrainingMode::sync, 2, 1, 8);
    job.model.settings["numbers"] = numbers;
    job.optimizer.settings["grad_clip"] = 0.01;
    job.evaluation.frequency = 4;
    const auto plain = plain_sync_loop(job, data);
    for (std::size_t shards : {1, 2, 4}) {
      CAPTURE(shards);
      job.cluster.servers = shards;
      const auto summary = train_sparse(job, data, data, 2);
      CHECK(same_bits(floats_of(summary.run.final_weights.values), plain.dense));
      REQUIRE(summary.tables.size() == plain.tables.size());
      for (std::size_t f = 0; f < plain.tables.size(); ++f) {
        const auto expected = rows_of(plain.tables[f]);
        CHECK(summary.tables[f].keys == expected.keys);
        CHECK(same_bits(summary.tables[f].values, expected.values));
      }
    }
  }
}

TEST_CASE("only rows of keys a training batch touched exist on the shards, not those the dev set reads") {
  const auto train = colour_task(120, 5);
  const auto dev = colour_task(60, 6, 1000);  // tokens the training set never has
  auto job = sparse_job(TrainingMode::sync, 2, 3, 9);
  job.evaluation.frequency = 3;
  const auto plain = plain_sync_loop(job, train);  // its tables hold exactly the keys its batches pulled
  const auto summary = train_sparse(job, train, dev, 2);
  auto model = SparseModel::build(job.model.architecture, job.model.settings, 3).value();
  const auto dev_lookup = model.look_up(gather_examples(*dev, {}, 0, dev->count).fields).value();
  for (std::size_t f = 0; f < plain.tables.size(); ++f) {
    CAPTURE(f);
    const auto touched = plain.tables[f].keys();
    CHECK(summary.tables[f].keys == touched);
    std::size_t dev_only = 0;
    for (const auto key : dev_lookup.fields[f].keys) {
      if (std::binary_search(touched.begin(), touched.end(), key)) continue;
      ++dev_only;
      CHECK_FALSE(std::binary_search(summary.tables[f].keys.begin(), summary.tables[f].keys.end(), key));
    }
    if (f == 0) CHECK(dev_only > 0);  // the token table: the dev set reads rows no batch touched
  }
}

TEST_CASE("async sparse training learns the hidden rule: right on nearly every dev example, far above the majority class") {
  const auto train = colour_task(600, 21);
  const auto dev = colour_task(300, 22);
  auto job = sparse_job(TrainingMode::async, 2, 2, 150);
  job.evaluation.frequency = 100;
  std::vector<double> accuracies;
  const auto summary = train_sparse(job, train, dev, 2, [&](const EvaluationReport& report) {
    accuracies.push_back(report.accuracy);
  });
  std::vector<std::size_t> per_class(3, 0);
  for (const auto label : dev->labels) ++per_class[label];
  const double majority = static_cast<double>(*std::max_element(per_class.begin(), per_class.end())) /
                          static_cast<double>(dev->count);
  MESSAGE("async: dev accuracy " << summary.run.final_accuracy << ", majority class " << majority);
  CHECK(summary.run.steps == 300);  // every batch's gradient applied once
  CHECK(!accuracies.empty());
  // Every example's tokens carry its colour: a model that learned the rule is right on nearly all of them
  // (the majority class alone is right on about a third).
  CHECK(summary.run.final_accuracy >= 0.9);
  CHECK(majority < 0.5);
}

TEST_CASE("sync sparse evaluations score each stopping point's weights with the rows of the same step") {
  const auto train = colour_task(100, 8);
  const auto dev = colour_task(50, 9);
  auto job = sparse_job(TrainingMode::sync, 2, 2, 6);
  job.evaluation.frequency = 2;
  // The plain loop's dev accuracy and loss after each step, its tables read without making rows.
  auto model = SparseModel::build(job.model.architecture, job.model.settings, 3).value();
  const auto whole_dev = gather_examples(*dev, {}, 0, dev->count);
  const auto dev_lookup = model.look_up(whole_dev.fields).value();
  std::vector<Evaluation> plain;
  const auto evaluate_plain = [&](std::uint64_t, const AlignedFloats& weights,
                                  const std::vector<EmbeddingTable>& tables) {
    std::vector<SparseRows> rows;
    for (std::size_t f = 0; f < tables.size(); ++f) {
      rows.emplace_back(dev_lookup.fields[f].keys, tables[f].width());
      for (std::size_t i = 0; i < rows[f].size(); ++i) {
        const float* row = tables[f].find(rows[f].keys[i]);
        if (row) std::copy(row, row + tables[f].width(), rows[f].row(i));
        else tables[f].initial_row(rows[f].keys[i], rows[f].row(i));
      }
    }
    const auto& targets = whole_dev.targets;
    plain.push_back(model.evaluate(weights.data(), dev_lookup, rows,
                                   ConstMatrixMap(targets.data(), targets.rows(), targets.cols()),
                                   job.evaluation.batch_size));
  };
  plain_sync_loop(job, train, evaluate_plain);
  std::vector<EvaluationReport> reports;
  train_sparse(job, train, dev, 2, [&](const EvaluationReport& report) { reports.push_back(report); });
  // One report for the starting weights, one per evaluation point, the final one last, as dense runs
  // print them.
  REQUIRE(reports.size() == 4);
  for (std::size_t r = 0; r < 4; ++r) {
    CAPTURE(r);
    CHECK(reports[r].iteration == 2 * r);
    CHECK(reports[r].version == 2 * r);
    CHECK(reports[r].final == (r == 3));
    CHECK(reports[r].accuracy == plain[2 * r].accuracy);
    CHECK(reports[r].loss == plain[2 * r].loss);
  }
}

TEST_CASE("a push's bytes are a fixed header plus 8 + 4 x width per unique key, whatever the table's size") {
  ActorConfig config(1);
  caf::actor_system system{config};
  const auto data = colour_task(64, 9);
  const auto batch = gather_examples(*data, {}, 0, 64);
  std::set<std::size_t> headers[2];  // sizes without and with squares
  for (const std::int64_t rows : {std::int64_t{500}, std::int64_t{1} << 32}) {
    CAPTURE(rows);
    auto job = sparse_job(TrainingMode::sync, 1, 1, 1);
    job.model.settings["embedding_rows"] = std::vector<std::int64_t>{rows, rows};
    auto model = SparseModel::build(job.model.architecture, job.model.settings, 3).value();
    model.dense().initialize(1);
    const auto lookup = model.look_up(batch.fields).value();
    std::vector<SparseRows> pulled;
    for (std::size_t f = 0; f < 2; ++f) {
      pulled.emplace_back(lookup.fields[f].keys, model.fields()[f].width);
      std::fill(pulled.back().values.begin(), pulled.back().values.end(), 0.01f);
    }
    Random dropout(0);
    std::vector<SparseRows> gradients;
    model.compute_gradients(lookup, pulled,
                            ConstMatrixMap(batch.targets.data(), batch.targets.rows(), batch.targets.cols()), dropout,
                            gradients);
    for (const bool with_squares : {false, true}) {
      const auto push = split_push(3, 0, gradients, 1, with_squares).front();
      // The same tables with no keys: what every push of two tables carries besides its keys and rows.
      RowPush header = push;
      for (auto& entry : header.tables) entry.rows = SparseRows({}, entry.rows.width);
      std::size_t expected = serialize(system, header).size();
      for (std::size_t f = 0; f < 2; ++f) expected += gradients[f].size() * (8 + 4 * model.fields()[f].width);
      CHECK(serialize(system, push).size() == expected);
      headers[with_squares ? 1 : 0].insert(serialize(system, header).size());
    }
  }
  // The header is the same whatever the tables' size: one per kind of push.
  CHECK(headers[0].size() == 1);
  CHECK(headers[1].size() == 1);
}

TEST_CASE("row messages round-trip through CAF's binary serializer, bits and all") {
  ActorConfig config(1);
  caf::actor_system system{config};
  SparseRows rows({3, 8, 21}, 2);
  rows.values = {1.5f, -0.0f, std::numeric_limits<float>::infinity(), std::numeric_limits<float>::denorm_min(),
                 std::numeric_limits<float>::quiet_NaN(), 7.0f};
  const auto same_rows = [](const SparseRows& a, const SparseRows& b) {
    return a.keys == b.keys && a.width == b.width && same_bits(a.values, b.values);
  };

  RowPull pull{12, true, {TableKeys{0, {1, 4, 9}}, TableKeys{2, {}}}};
  RowPull pull_back;
  REQUIRE_FALSE(deserialize(system, serialize(system, pull), pull_back));
  CHECK(pull_back.version == 12);
  CHECK(pull_back.evaluation);
  REQUIRE(pull_back.tables.size() == 2);
  CHECK(pull_back.tables[0].table == 0);
  CHECK(pull_back.tables[0].keys == std::vector<std::uint64_t>{1, 4, 9});
  CHECK(pull_back.tables[1].table == 2);
  CHECK(pull_back.tables[1].keys.empty());

  PulledRows answer{5, {TableRows{1, rows}}};
  PulledRows answer_back;
  REQUIRE_FALSE(deserialize(system, serialize(system, answer), answer_back));
  CHECK(answer_back.version == 5);
  REQUIRE(answer_back.tables.size() == 1);
  CHECK(answer_back.tables[0].table == 1);
  CHECK(same_rows(answer_back.tables[0].rows, rows));

  RowPush push{7, 3, {TableRows{0, rows}}, {std::numeric_limits<double>::infinity()}};
  RowPush push_back;
  REQUIRE_FALSE(deserialize(system, serialize(system, push), push_back));
  CHECK(push_back.version == 7);
  CHECK(push_back.worker == 3);
  REQUIRE(push_back.tables.size() == 1);
  CHECK(same_rows(push_back.tables[0].rows, rows));
  CHECK(push_back.squares == push.squares);

  TableSquares squares{9, 1, {1, 2, 3, 0xffffffffffffffffull}};
  TableSquares squares_back;
  REQUIRE_FALSE(deserialize(system, serialize(system, squares), squares_back));
  CHECK(squares_back.version == 9);
  CHECK(squares_back.shard == 1);
  CHECK(squares_back.words == squares.words);

  // A count that promises more bytes than the message holds is refused before anything is allocated.
  auto bytes = serialize(system, push);
  bytes.resize(bytes.size() - 4);
  CHECK(deserialize(system, bytes, push_back));
}

TEST_CASE("a sparse run refuses what it does not offer yet, and data that do not fit its model, in one line") {
  ActorConfig config(2);
  caf::actor_system system{config};
  const auto data = colour_task(40, 1);
  const auto refusal = [&](const TrainingJob& job, std::shared_ptr<const SparseDataset> train) {
    auto run = train_in_process(system, job, run_on_columns(train, data));
    REQUIRE_FALSE(run.ok());
    CHECK(run.error().find('\n') == std::string::npos);
    return run.error();
  };
  auto job = sparse_job(TrainingMode::sync, 2, 2, 3);
  job.training.with_averages = true;
  CHECK(refusal(job, data) ==
        "training.with_averages is not offered for models with embedding tables yet: table rows step by lazy row "
        "optimizers, which touch a row only when a batch uses it and keep no averages");
  job = sparse_job(TrainingMode::sync, 2, 2, 3);
  job.optimizer.name = "SGD.v1";
  CHECK(refusal(job, data) == "embedding tables step with lazy Adam, which takes Adam.v1's settings, not SGD.v1's");
  auto one_field = std::make_shared<SparseDataset>(*data);
  one_field->id_fields.pop_back();
  CHECK(refusal(sparse_job(TrainingMode::sync, 2, 2, 3), one_field) ==
        "the model 'hashembed_mlp.v1' has 2 id fields, the data 1");
}

TEST_CASE("every shard lets an evaluation point's step go, those holding none of the dev set's keys too") {
  const auto train = colour_task(60, 2);
  const auto dev = colour_task(1, 3);  // one example: at most 8 keys, so most of 16 shards hold none
  auto job = sparse_job(TrainingMode::sync, 2, 16, 4);
  job.evaluation.frequency = 2;
  std::vector<EvaluationReport> reports;
  const auto summary =
      train_sparse(job, train, dev, 2, [&](const EvaluationReport& report) { reports.push_back(report); });
  CHECK(summary.run.steps == 4);
  CHECK(reports.size() == 3);  // iterations 0, 2 and 4
}

TEST_CASE("a pipelined async worker of a model with tables computes its next gradient before the last is answered") {
  // The same loop as a dense worker's: its next step (rows pulled ahead) starts while its push is out.
  const auto data = colour_task(160, 1);
  auto job = sparse_job(TrainingMode::async, 1, 2, 30);
  const auto plain = train_sparse(job, data, data, 2);
  CHECK(plain.run.staleness_max == 0.0);
  job.cluster.pipeline = true;
  // As for the dense worker's test: at 10 ms a gradient the driver has time to hand out credits, so the
  // pipeline never drains.
  job.cluster.worker_delay = std::chrono::milliseconds{10};
  const auto pipelined = train_sparse(job, data, data, 2);
  CHECK(pipelined.run.steps == 30);
  CHECK(pipelined.run.final_weights.version == 30);
  CHECK(pipelined.run.staleness_max == 1.0);
  CHECK(pipelined.run.staleness_mean == doctest::Approx(29.0 / 30.0));
}

TEST_CASE("pipelined async and ssp with two workers of a model with tables apply every gradient once") {
  const auto data = colour_task(160, 1);
  for (const auto mode : {TrainingMode::async, TrainingMode::ssp}) {
    auto job = sparse_job(mode, 2, 2, 20);
    job.cluster.pipeline = true;
    const auto summary = train_sparse(job, data, data, 2);
    CHECK(summary.run.steps == 40);
    CHECK(summary.run.samples == summary.run.steps * job.training.batch_size);
    for (auto count : summary.run.gradients_per_worker) CHECK(count > 0);
  }
}

TEST_CASE("pipelined sync runs of a model with tables are the plain loop's one-step-stale steps, bit for bit, on 1, 2 and 4 shards") {
  const auto data = colour_task(200, 11);
  auto job = sparse_job(TrainingMode::sync, 2, 1, 12);
  job.optimizer.settings["grad_clip"] = 0.01;
  job.cluster.pipeline = true;
  const auto plain = plain_sync_loop(job, data, nullptr, true);
  // Not the unpipelined loop: the stale steps differ.
  CHECK_FALSE(same_bits(plain.dense, plain_sync_loop(job, data).dense));
  for (std::size_t shards : {1, 2, 4}) {
    CAPTURE(shards);
    job.cluster.servers = shards;
    const auto summary = train_sparse(job, data, data, 2);
    CHECK(summary.run.final_weights.version == 12);
    CHECK(summary.run.staleness_max == 1.0);
    check_same_as_plain(summary, plain);
  }
}
