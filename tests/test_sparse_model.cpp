// hashembed_mlp.v1: building it from settings, its gradients through embeddings, pooling and the dense
// chain against finite differences, and a plain training loop that learns a hidden rule over ids.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/adam.hpp"
#include "model/embedding_table.hpp"
#include "model/lazy_adam.hpp"
#include "model/murmurhash3.hpp"
#include "model/string_hash.hpp"
#include "model/sparse_model.hpp"
#include "tests/gradient_check.hpp"

using namespace psgrad;
using psgrad::testing::check_gradient;
using psgrad::testing::random_values;

namespace {

Settings small_settings(const std::string& pooling) {
  return {{"embedding_widths", std::vector<std::int64_t>{3, 2}},
          {"embedding_rows", std::vector<std::int64_t>{11, 5}},
          {"hidden_width", std::int64_t{6}},
          {"dropout", 0.0},
          {"pooling", pooling}};
}

// Four examples: field 0 bags of different lengths (one empty, one with a repeated id), field 1 one id each.
std::vector<RaggedIds> small_batch() {
  std::vector<RaggedIds> batch(2);
  batch[0].add_example({1, 2, 3});
  batch[0].add_example({});
  batch[0].add_example({4, 4});
  batch[0].add_example({5});
  for (std::uint64_t id : {7, 8, 7, 9}) batch[1].add_example({id});
  return batch;
}

Matrix one_hot(const std::vector<int>& classes, int count) {
  Matrix targets = Matrix::Zero(static_cast<Eigen::Index>(classes.size()), count);
  for (std::size_t i = 0; i < classes.size(); ++i) targets(static_cast<Eigen::Index>(i), classes[i]) = 1.0f;
  return targets;
}

ConstMatrixMap view(const Matrix& m) { return ConstMatrixMap(m.data(), m.rows(), m.cols()); }

}  // namespace

TEST_CASE("hashembed_mlp.v1 builds a front per field and the tutorial's chain behind their concatenation") {
  auto model = SparseModel::build("hashembed_mlp.v1", small_settings("sum"), 3);
  REQUIRE_MESSAGE(model.ok(), (model.ok() ? "" : model.error()));
  REQUIRE(model->fields().size() == 2);
  CHECK(model->fields()[0].width == 3);
  CHECK(model->fields()[1].rows == 5);
  // The default seed numbers the fields as spaCy's MultiHashEmbed does: 8, 9, ...
  CHECK(model->fields()[0].seed == 8);
  CHECK(model->fields()[1].seed == 9);
  CHECK(model->fields()[1].column == 1);
  CHECK(model->pooling() == Pooling::sum);
  CHECK(model->embedded_width() == 5);
  CHECK(model->dense().layout().describe() ==
        "relu1.W 6x5 @0\nrelu1.b 1x6 @30\nrelu2.W 6x6 @36\nrelu2.b 1x6 @72\nsoftmax1.W 3x6 @78\nsoftmax1.b 1x3 @96\n");
  auto seeded = small_settings("mean");
  seeded["seed"] = std::int64_t{4294967294};
  auto with_seeds = SparseModel::build("hashembed_mlp.v1", seeded, 3);
  REQUIRE(with_seeds.ok());
  CHECK(with_seeds->fields()[0].seed == 4294967294u);
  CHECK(with_seeds->fields()[1].seed == 4294967295u);
  CHECK(with_seeds->pooling() == Pooling::mean);
}

TEST_CASE("one registry holds every architecture and says which have embedding tables") {
  const auto names = architecture_names();
  CHECK(std::find(names.begin(), names.end(), "hashembed_mlp.v1") != names.end());
  CHECK(std::find(names.begin(), names.end(), "relu_relu_softmax.v1") != names.end());
  CHECK(architecture_names_with_tables() == std::vector<std::string>{"hashembed_mlp.v1"});
  CHECK(names_architecture_with_tables("hashembed_mlp.v1"));
  CHECK_FALSE(names_architecture_with_tables("mlp.v1"));
  CHECK_FALSE(names_architecture_with_tables("no_such.v1"));
}

TEST_CASE("a model of dense arrays only refuses an architecture with tables, and the other way round") {
  const auto as_dense = Model::build("hashembed_mlp.v1", small_settings("sum"), 4, 3);
  REQUIRE_FALSE(as_dense.ok());
  CHECK(as_dense.error().find("'hashembed_mlp.v1' has embedding tables") != std::string::npos);
  const auto as_tables = SparseModel::build("mlp.v1", Settings{}, 3);
  REQUIRE_FALSE(as_tables.ok());
  CHECK(as_tables.error() == "architecture 'mlp.v1' has no embedding tables");
}

TEST_CASE("bad hashembed_mlp.v1 settings are one-line errors naming the setting") {
  auto error_of = [](const Settings& settings) {
    auto model = SparseModel::build("hashembed_mlp.v1", settings, 3);
    return model.ok() ? std::string("built") : model.error();
  };
  auto settings = small_settings("sum");
  settings["embedding_rows"] = std::vector<std::int64_t>{11};
  CHECK(error_of(settings) ==
        "architecture 'hashembed_mlp.v1': embedding_rows: expected one row count per field (2, as "
        "embedding_widths), got 1");
  settings = small_settings("sum");
  settings["seed"] = std::int64_t{4294967295};
  CHECK(error_of(settings) ==
        "architecture 'hashembed_mlp.v1': seed: expected at most 4294967294 so that each of the 2 fields' seeds "
        "fits in 32 bits, got 4294967295");
  settings = small_settings("max");
  CHECK(error_of(settings) == "architecture 'hashembed_mlp.v1': pooling: expected a string, one of \"sum\", \"mean\"");
  settings = small_settings("sum");
  settings["embedding_rows"] = std::vector<std::int64_t>{11, 4294967297};
  CHECK(error_of(settings) ==
        "architecture 'hashembed_mlp.v1': embedding_rows: expected an array of integers each in [1, 4294967296]");
  settings = small_settings("sum");
  settings["embedding_widths"] = std::vector<std::int64_t>{};
  CHECK(error_of(settings) ==
        "architecture 'hashembed_mlp.v1': embedding_widths: expected a non-empty array of integers each in [1, "
        "1048576]");
  CHECK(SparseModel::build("nope.v1", {}, 3).error() == "unknown architecture 'nope.v1'");
}

TEST_CASE("look_up refuses a batch with other fields or examples than the model's") {
  auto model = SparseModel::build("hashembed_mlp.v1", small_settings("sum"), 3).value();
  auto batch = small_batch();
  batch.pop_back();
  CHECK(model.look_up(batch).error() == "a batch of 1 fields for a model of 2 fields");
  batch = small_batch();
  batch[1].add_example({3});
  CHECK(model.look_up(batch).error() == "field 1 has 5 examples, field 0 has 4");
}

TEST_CASE("the gradients of the dense weights and of every pulled row match finite differences") {
  for (const std::string pooling : {"sum", "mean"}) {
    CAPTURE(pooling);
    auto model = SparseModel::build("hashembed_mlp.v1", small_settings(pooling), 3).value();
    const auto lookup = model.look_up(small_batch()).value();
    std::vector<SparseRows> rows;
    for (std::size_t f = 0; f < 2; ++f) {
      rows.emplace_back(lookup.fields[f].keys, model.fields()[f].width);
      rows.back().values = random_values(rows.back().values.size(), 10 + f, 0.5f);
    }
    // Random weights everywhere: Softmax starts at zero, which would hide every earlier gradient.
    auto weights = random_values(model.dense().parameter_count(), 3, 0.5f);
    const Matrix targets = one_hot({0, 2, 1, 2}, 3);
    Random unused(0);
    std::vector<SparseRows> row_gradients;
    auto loss = [&] {
      model.dense().set_weights(weights.data(), weights.size());
      return static_cast<double>(model.compute_gradients(lookup, rows, view(targets), unused, row_gradients));
    };
    loss();
    const std::vector<float> dense_gradient(model.dense().gradients().begin(), model.dense().gradients().end());
    const auto analytic_rows = row_gradients;
    REQUIRE(analytic_rows.size() == 2);
    for (std::size_t f = 0; f < 2; ++f) {
      CHECK(analytic_rows[f].keys == lookup.fields[f].keys);
      check_gradient(rows[f].values, analytic_rows[f].values, loss);
    }
    check_gradient(weights, dense_gradient, loss);
  }
}

TEST_CASE("a plain loop with lazy Adam on the tables learns a hidden rule over token ids") {
  // Each token has a hidden colour (its number mod 3); a text's tokens share one colour, its class. A
  // second field holds a distractor id unrelated to the class.
  auto token = [](std::uint64_t n) { return string_hash("token" + std::to_string(n)); };
  Random data(5);
  auto make_batch = [&](std::size_t size, std::vector<RaggedIds>& batch, Matrix& targets) {
    batch.assign(2, RaggedIds());
    std::vector<int> classes;
    for (std::size_t e = 0; e < size; ++e) {
      const int colour = static_cast<int>(data.below(3));
      std::vector<std::uint64_t> bag(1 + data.below(4));
      for (auto& id : bag) id = token(3 * data.below(20) + static_cast<std::uint64_t>(colour));
      batch[0].add_example(bag.data(), bag.size());
      batch[1].add_example({data.below(10)});
      classes.push_back(colour);
    }
    targets = one_hot(classes, 3);
  };
  Settings settings = {{"embedding_widths", std::vector<std::int64_t>{8, 4}},
                       {"embedding_rows", std::vector<std::int64_t>{500, 50}},
                       {"hidden_width", std::int64_t{32}},
                       {"dropout", 0.0}};
  auto model = SparseModel::build("hashembed_mlp.v1", settings, 3).value();
  model.dense().initialize(1);
  std::vector<EmbeddingTable> tables;
  std::vector<LazyAdam> table_optimizers;
  LazyAdamSettings row_settings;
  row_settings.learn_rate = 0.01;
  for (std::size_t f = 0; f < 2; ++f) {
    EmbeddingTableSettings table_settings;
    table_settings.width = model.fields()[f].width;
    table_settings.init_seed = embedding_init_seed(1, f);
    tables.emplace_back(table_settings);
    table_optimizers.emplace_back(row_settings, table_settings.width);
  }
  AdamSettings dense_settings;
  dense_settings.learn_rate = 0.01;
  Adam dense_optimizer(dense_settings, model.dense().layout());

  auto pull = [&](const BatchLookup& lookup) {
    std::vector<SparseRows> rows;
    for (std::size_t f = 0; f < 2; ++f) rows.push_back(tables[f].pull(lookup.fields[f].keys).value());
    return rows;
  };
  std::vector<RaggedIds> batch;
  Matrix targets;
  Random dropout(0);
  std::vector<SparseRows> row_gradients;
  float first_loss = 0.0f, last_loss = 0.0f;
  for (int step = 0; step < 300; ++step) {
    make_batch(32, batch, targets);
    const auto lookup = model.look_up(batch).value();
    const float loss = model.compute_gradients(lookup, pull(lookup), view(targets), dropout, row_gradients);
    if (step == 0) first_loss = loss;
    last_loss = loss;
    dense_optimizer.apply_gradients(model.dense().weights_data(), model.dense().gradients().data());
    for (std::size_t f = 0; f < 2; ++f) REQUIRE(tables[f].apply(row_gradients[f], table_optimizers[f]).ok());
  }
  make_batch(300, batch, targets);
  const auto lookup = model.look_up(batch).value();
  const ConstMatrixMap probs = model.predict(lookup, pull(lookup));
  int correct = 0;
  for (Eigen::Index r = 0; r < probs.rows(); ++r) {
    Eigen::Index guess, truth;
    probs.row(r).maxCoeff(&guess);
    targets.row(r).maxCoeff(&truth);
    correct += guess == truth;
  }
  const double accuracy = correct / 300.0;
  MESSAGE("loss " << first_loss << " -> " << last_loss << ", held-out accuracy " << accuracy);
  CHECK(last_loss < first_loss);
  // Chance is 1/3; the rule is exact, so a model that learned it gets nearly all right.
  CHECK(accuracy >= 0.9);
}
