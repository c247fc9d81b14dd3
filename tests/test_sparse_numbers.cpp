// hashembed_mlp.v1's numeric columns: the model is built for the data's number columns, feeds them
// (scaled as its `numbers` setting says) after the pooled embeddings, has their gradients right, refuses
// data laid out otherwise, and learns a class that only a number tells through the actors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "caf/all.hpp"
#include "actors/actor_config.hpp"
#include "actors/local_training.hpp"
#include "actors/local_training.hpp"
#include "model/sparse_batcher.hpp"
#include "model/sparse_model.hpp"
#include "tests/gradient_check.hpp"
#include "tests/sparse_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

Settings small_settings(const std::string& pooling, const std::string& numbers = "as_is") {
  return {{"embedding_widths", std::vector<std::int64_t>{3, 2}},
          {"embedding_rows", std::vector<std::int64_t>{11, 5}},
          {"hidden_width", std::int64_t{6}},
          {"dropout", 0.0},
          {"pooling", pooling},
          {"numbers", numbers}};
}

// Four examples of two id fields, and two number columns with a count, a negative value and a zero.
std::vector<RaggedIds> small_batch() {
  std::vector<RaggedIds> batch(2);
  batch[0].add_example({1, 2, 3});
  batch[0].add_example({});
  batch[0].add_example({4, 4});
  batch[0].add_example({5});
  for (std::uint64_t id : {7, 8, 7, 9}) batch[1].add_example({id});
  return batch;
}
const std::vector<float> small_numbers = {3.0f, -0.5f, 0.0f, 1.25f, 2.0f, 0.75f, -2.0f, 0.25f};
const std::vector<std::string> number_names = {"count", "offset"};

Matrix one_hot(const std::vector<int>& classes, int count) {
  Matrix targets = Matrix::Zero(static_cast<Eigen::Index>(classes.size()), count);
  for (std::size_t i = 0; i < classes.size(); ++i) targets(static_cast<Eigen::Index>(i), classes[i]) = 1.0f;
  return targets;
}

ConstMatrixMap view(const Matrix& m) { return ConstMatrixMap(m.data(), m.rows(), m.cols()); }

std::vector<SparseRows> random_rows(const SparseModel& model, const BatchLookup& lookup) {
  std::vector<SparseRows> rows;
  for (std::size_t f = 0; f < model.fields().size(); ++f) {
    rows.emplace_back(lookup.fields[f].keys, model.fields()[f].width);
    rows.back().values = random_values(rows.back().values.size(), 10 + f, 0.5f);
  }
  return rows;
}

}  // namespace

TEST_CASE("hashembed_mlp.v1 built for a data set reads its number columns after the pooled embeddings") {
  auto data = std::make_shared<SparseDataset>(*with_numbers(colour_task(4, 1), 2));
  auto model = SparseModel::build_for_data("hashembed_mlp.v1", small_settings("sum"), *data, "data");
  REQUIRE_MESSAGE(model.ok(), (model.ok() ? "" : model.error()));
  CHECK(model->number_names() == number_names);
  CHECK(model->number_scaling() == NumberScaling::as_is);
  CHECK(model->embedded_width() == 5);
  CHECK(model->input_width() == 7);
  CHECK(model->dense().layout().describe() ==
        "relu1.W 6x7 @0\nrelu1.b 1x6 @42\nrelu2.W 6x6 @48\nrelu2.b 1x6 @84\nsoftmax1.W 3x6 @90\n"
        "softmax1.b 1x3 @108\n");
  CHECK(model->check_inputs(*data, "dev data").ok());

  auto log_model = SparseModel::build("hashembed_mlp.v1", small_settings("sum", "log1p"), 3, number_names);
  REQUIRE(log_model.ok());
  CHECK(log_model->number_scaling() == NumberScaling::log1p);
  CHECK(SparseModel::build("hashembed_mlp.v1", small_settings("sum", "log"), 3).error() ==
        "architecture 'hashembed_mlp.v1': numbers: expected a string, one of \"as_is\", \"log1p\"");
}

TEST_CASE("data laid out otherwise than the model's inputs is refused in one line naming both") {
  const auto numbered = with_numbers(colour_task(4, 1), 2);
  const auto plain = colour_task(4, 1);
  auto model = SparseModel::build_for_data("hashembed_mlp.v1", small_settings("sum"), *numbered, "data").value();
  CHECK(model.check_inputs(*plain, "dev data").error() ==
        "the model 'hashembed_mlp.v1' reads 2 number columns (count, offset), the dev data has 0 (none)");
  auto swapped = std::make_shared<SparseDataset>(*numbered);
  std::swap(swapped->number_names[0], swapped->number_names[1]);
  CHECK(model.check_inputs(*swapped, "dev data").error() ==
        "the model 'hashembed_mlp.v1' reads 2 number columns (count, offset), the dev data has 2 (offset, count)");
  auto one_field = std::make_shared<SparseDataset>(*numbered);
  one_field->id_fields.pop_back();
  CHECK(SparseModel::build_for_data("hashembed_mlp.v1", small_settings("sum"), *one_field, "training data").error() ==
        "the model 'hashembed_mlp.v1' has 2 id fields, the training data 1");

  CHECK(model.look_up(small_batch(), {1.0f, 2.0f, 3.0f}).error() ==
        "3 numbers for 4 examples of 2 number columns each");
  CHECK(model.look_up(small_batch()).error() == "0 numbers for 4 examples of 2 number columns each");

  auto bad = std::make_shared<SparseDataset>(*numbered);
  bad->numbers[3] = std::numeric_limits<float>::quiet_NaN();
  CHECK(sparse_dataset_problem(*bad) == std::string("number column 'offset' of example 1 is not finite"));
  bad->numbers.pop_back();
  CHECK(sparse_dataset_problem(*bad) == std::string("7 numbers for 4 examples of 2 number columns"));
}

TEST_CASE("log1p scales each number as sign(x) log(1 + |x|), in column order, and as_is leaves it") {
  auto as_is = SparseModel::build("hashembed_mlp.v1", small_settings("sum"), 3, number_names).value();
  auto log1p = SparseModel::build("hashembed_mlp.v1", small_settings("sum", "log1p"), 3, number_names).value();
  const auto kept = as_is.look_up(small_batch(), small_numbers).value();
  const auto scaled = log1p.look_up(small_batch(), small_numbers).value();
  CHECK(kept.numbers == small_numbers);
  std::vector<float> expected;
  for (const float x : small_numbers)
    expected.push_back(static_cast<float>(std::copysign(std::log1p(std::abs(static_cast<double>(x))), x)));
  CHECK(scaled.numbers == expected);
  // The same weights and rows give the same classes whether the model scales or is handed scaled numbers.
  const auto weights = random_values(as_is.dense().parameter_count(), 4, 0.5f);
  as_is.dense().set_weights(weights.data(), weights.size());
  log1p.dense().set_weights(weights.data(), weights.size());
  const auto rows = random_rows(as_is, kept);
  const Matrix from_log1p = log1p.predict(scaled, rows);
  const Matrix from_as_is = as_is.predict(as_is.look_up(small_batch(), expected).value(), rows);
  CHECK(from_log1p == from_as_is);
}

TEST_CASE("the gradients through the numbers match finite differences, and each number column feeds its own") {
  for (const std::string numbers : {"as_is", "log1p"}) {
    for (const std::string pooling : {"sum", "mean"}) {
      CAPTURE(numbers);
      CAPTURE(pooling);
      auto model = SparseModel::build("hashembed_mlp.v1", small_settings(pooling, numbers), 3, number_names).value();
      const auto lookup = model.look_up(small_batch(), small_numbers).value();
      auto rows = random_rows(model, lookup);
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
      for (std::size_t f = 0; f < 2; ++f) check_gradient(rows[f].values, analytic_rows[f].values, loss);
      check_gradient(weights, dense_gradient, loss);
      // relu1.W is (hidden, input) row-major; its last two columns read the numbers.
      const std::size_t width = model.input_width();
      double count_column = 0.0;
      for (std::size_t o = 0; o < 6; ++o) count_column += std::abs(dense_gradient[o * width + 5]);
      CHECK(count_column > 0.0);
    }
  }
  // A column of zeros gives its relu1.W column no gradient, and only that one: the numbers sit where
  // their column says.
  auto model = SparseModel::build("hashembed_mlp.v1", small_settings("sum"), 3, number_names).value();
  auto zero_offsets = small_numbers;
  for (std::size_t e = 0; e < 4; ++e) zero_offsets[2 * e + 1] = 0.0f;
  const auto lookup = model.look_up(small_batch(), zero_offsets).value();
  const auto weights = random_values(model.dense().parameter_count(), 3, 0.5f);
  model.dense().set_weights(weights.data(), weights.size());
  Random unused(0);
  std::vector<SparseRows> row_gradients;
  model.compute_gradients(lookup, random_rows(model, lookup), view(one_hot({0, 2, 1, 2}, 3)), unused, row_gradients);
  const auto gradient = model.dense().gradients();
  double counts = 0.0, offsets = 0.0;
  for (std::size_t o = 0; o < 6; ++o) {
    counts += std::abs(gradient[o * 7 + 5]);
    offsets += std::abs(gradient[o * 7 + 6]);
  }
  CHECK(counts > 0.0);
  CHECK(offsets == 0.0);
}

TEST_CASE("a sync run through the actors learns a class only a number tells, well above the majority class") {
  const auto train = level_task(900, 31);
  const auto dev = level_task(300, 32);
  auto job = sparse_job(TrainingMode::sync, 2, 2, 250);
  job.model.settings["embedding_widths"] = std::vector<std::int64_t>{4};
  job.model.settings["embedding_rows"] = std::vector<std::int64_t>{50};
  job.model.settings["dropout"] = 0.0;
  ActorConfig config(2);
  prepare_local_run(config, job.cluster.num_workers);
  caf::actor_system system{config};
  auto summary = train_in_process(system, job, run_on_columns(train, dev));
  REQUIRE_MESSAGE(summary.ok(), (summary.ok() ? "" : summary.error()));
  std::vector<std::size_t> per_class(3, 0);
  for (const auto label : dev->labels) ++per_class[label];
  const double majority = static_cast<double>(*std::max_element(per_class.begin(), per_class.end())) /
                          static_cast<double>(dev->count);
  MESSAGE("dev accuracy " << summary->run.final_accuracy << ", majority class " << majority);
  // Ids and the decoy say nothing of the class: without the level a model stays near the majority class,
  // whose share of 300 examples drawn at random is within a few hundredths of 1/3.
  CHECK(summary->run.final_accuracy > majority + 0.3);
}
