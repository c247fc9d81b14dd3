// Lazy Adam and Adagrad on a table against a plain dense reference in double: every row of the table
// held, and a step per batch applied, row by row, only to the rows the batch has a gradient for.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "model/embedding_table.hpp"
#include "model/lazy_adam.hpp"
#include "model/sparse_adagrad.hpp"

using namespace psgrad;

namespace {

constexpr std::size_t rows = 6;
constexpr std::size_t width = 3;

// A dense table of all rows, in double, with per-row state.
struct DenseTable {
  std::vector<std::vector<double>> weights, first, second;
  std::vector<int> steps;
  explicit DenseTable(const EmbeddingTable& initial) {
    for (std::uint64_t key = 0; key < rows; ++key) {
      std::vector<float> row(width);
      initial.initial_row(key, row.data());
      weights.emplace_back(row.begin(), row.end());
    }
    first.assign(rows, std::vector<double>(width, 0.0));
    second = first;
    steps.assign(rows, 0);
  }
};

// The clip factor of one batch: by the norm of the whole (dense, mostly zero) gradient of the table.
double clip_factor(const std::map<std::uint64_t, std::vector<double>>& gradient, double clip) {
  double squares = 0.0;
  for (const auto& [key, row] : gradient)
    for (double g : row) squares += g * g;
  const double norm = std::sqrt(squares);
  return clip > 0.0 && norm >= clip ? clip / norm : 1.0;
}

void reference_adam(DenseTable& table, const std::map<std::uint64_t, std::vector<double>>& gradient,
                    const LazyAdamSettings& s) {
  const double scale = clip_factor(gradient, s.grad_clip);
  for (std::size_t key = 0; key < rows; ++key) {
    const auto found = gradient.find(key);
    if (found == gradient.end()) continue;  // lazy: no gradient, no step, no decay of the moments
    const int t = ++table.steps[key];
    const double learn_rate = s.learn_rate * std::sqrt(1.0 - std::pow(s.beta2, t)) / (1.0 - std::pow(s.beta1, t));
    for (std::size_t i = 0; i < width; ++i) {
      const double g = found->second[i] * scale;
      double& m = table.first[key][i];
      double& v = table.second[key][i];
      m = s.beta1 * m + (1.0 - s.beta1) * g;
      v = s.beta2 * v + (1.0 - s.beta2) * g * g;
      double& w = table.weights[key][i];
      w -= learn_rate * m / (std::sqrt(v) + s.eps);
      w -= s.learn_rate * s.L2 * w;
    }
  }
}

void reference_adagrad(DenseTable& table, const std::map<std::uint64_t, std::vector<double>>& gradient,
                       const AdagradSettings& s) {
  const double scale = clip_factor(gradient, s.grad_clip);
  for (std::size_t key = 0; key < rows; ++key) {
    const auto found = gradient.find(key);
    if (found == gradient.end()) continue;
    if (table.steps[key]++ == 0) table.second[key].assign(width, s.initial_accumulator);
    for (std::size_t i = 0; i < width; ++i) {
      const double g = found->second[i] * scale;
      double& sum = table.second[key][i];
      sum += g * g;
      table.weights[key][i] -= s.learn_rate * g / (std::sqrt(sum) + s.eps);
    }
  }
}

// Batches touching different rows, some twice in a row, one row (5) never, gradients large enough
// that some batches clip.
std::vector<std::map<std::uint64_t, std::vector<double>>> batches() {
  return {
      {{0, {0.5, -1.0, 0.25}}, {2, {2.0, 0.0, -0.75}}},
      {{0, {-0.125, 0.5, 0.5}}, {1, {0.0625, 0.03125, -0.5}}, {3, {1.5, 1.5, -1.5}}},
      {{2, {0.25, 0.25, 0.25}}},
      {{1, {-3.0, 4.0, 0.5}}, {2, {0.001, -0.002, 0.003}}, {4, {0.75, -0.25, 1.0}}},
      {{0, {0.0, 0.0, 1.0}}, {4, {-0.5, 0.5, -0.5}}},
  };
}

SparseRows sparse(const std::map<std::uint64_t, std::vector<double>>& gradient) {
  std::vector<std::uint64_t> keys;
  for (const auto& [key, row] : gradient) keys.push_back(key);
  SparseRows rows_out(keys, width);
  std::size_t i = 0;
  for (const auto& [key, row] : gradient) {
    for (std::size_t c = 0; c < width; ++c) rows_out.row(i)[c] = static_cast<float>(row[c]);
    ++i;
  }
  return rows_out;
}

template <class Optimizer, class Settings, class Reference>
void check_against_reference(const Settings& settings, Reference reference) {
  EmbeddingTableSettings table_settings;
  table_settings.width = width;
  table_settings.init_seed = 9;
  EmbeddingTable table(table_settings);
  REQUIRE(table.pull({0, 1, 2, 3, 4, 5}).ok());
  const std::vector<float> untouched(table.find(5), table.find(5) + width);
  DenseTable dense(table);
  Optimizer optimizer(settings, width);
  for (const auto& gradient : batches()) {
    REQUIRE(table.apply(sparse(gradient), optimizer).ok());
    reference(dense, gradient, settings);
  }
  for (std::uint64_t key = 0; key < rows; ++key)
    for (std::size_t i = 0; i < width; ++i) {
      CAPTURE(key);
      CAPTURE(i);
      CHECK(table.find(key)[i] == doctest::Approx(dense.weights[key][i]).epsilon(1e-5));
    }
  CHECK(std::memcmp(untouched.data(), table.find(5), width * sizeof(float)) == 0);
}

}  // namespace

TEST_CASE("lazy Adam matches the per-row dense reference, each row corrected by its own step count") {
  LazyAdamSettings settings;
  settings.learn_rate = 0.01;
  settings.grad_clip = 2.0;
  settings.L2 = 0.5;
  check_against_reference<LazyAdam>(settings, reference_adam);
  settings.grad_clip = 0.0;
  settings.L2 = 0.0;
  check_against_reference<LazyAdam>(settings, reference_adam);
}

TEST_CASE("lazy Adam counts steps per row") {
  EmbeddingTableSettings table_settings;
  table_settings.width = width;
  EmbeddingTable table(table_settings);
  LazyAdam optimizer(LazyAdamSettings{}, width);
  for (const auto& gradient : batches()) REQUIRE(table.apply(sparse(gradient), optimizer).ok());
  // Row 0 is in batches 0, 1 and 4; row 3 only in batch 1; row 5 in none and so was never made.
  CHECK(optimizer.row_steps(*table.slot(0)) == 3);
  CHECK(optimizer.row_steps(*table.slot(2)) == 3);
  CHECK(optimizer.row_steps(*table.slot(3)) == 1);
  CHECK_FALSE(table.slot(5).has_value());
}

TEST_CASE("Adagrad matches the per-row dense reference, accumulators starting at their initial value") {
  AdagradSettings settings;
  settings.learn_rate = 0.1;
  settings.initial_accumulator = 0.1;
  settings.grad_clip = 2.0;
  check_against_reference<SparseAdagrad>(settings, reference_adagrad);
  settings.grad_clip = 0.0;
  settings.initial_accumulator = 0.0;
  check_against_reference<SparseAdagrad>(settings, reference_adagrad);
}

TEST_CASE("Adagrad's first step of a row divides by the root of its initial accumulator plus g squared") {
  EmbeddingTableSettings table_settings;
  table_settings.width = 1;
  EmbeddingTable table(table_settings);
  AdagradSettings settings;
  settings.learn_rate = 0.5;
  settings.initial_accumulator = 0.75;
  settings.eps = 0.0;
  SparseAdagrad optimizer(settings, 1);
  REQUIRE(table.pull({4}).ok());
  const float before = table.find(4)[0];
  SparseRows gradient({4}, 1);
  gradient.values[0] = 0.5f;
  REQUIRE(table.apply(gradient, optimizer).ok());
  // sum = 0.75 + 0.25 = 1: the step is 0.5 * 0.5 / 1.
  CHECK(table.find(4)[0] == before - 0.25f);
  CHECK(optimizer.accumulator(*table.slot(4))[0] == 1.0f);
}

TEST_CASE("lazy Adam steps rows of large step counts with their own count's bias correction") {
  // Counts on both sides of the rates lazy Adam keeps, in no order, so a kept rate is checked against
  // those it computes afresh.
  const std::vector<std::uint64_t> counts = {70000, 3, 65536, 65535, 1, 200000};
  LazyAdamSettings settings;
  settings.learn_rate = 0.01;
  settings.grad_clip = 0.0;
  LazyAdam optimizer(settings, 1);
  for (std::size_t slot = 0; slot < counts.size(); ++slot) {
    const float state[2] = {0.5f, 0.25f};  // first moment, second moment
    optimizer.restore_row_state(slot, state, counts[slot]);
  }
  for (std::size_t slot = 0; slot < counts.size(); ++slot) {
    CAPTURE(counts[slot]);
    float row = 1.0f;
    const float gradient = 0.125f;
    optimizer.update_row(slot, &row, &gradient, 1.0f);
    const double t = static_cast<double>(counts[slot] + 1);
    const double rate =
        settings.learn_rate * std::sqrt(1.0 - std::pow(settings.beta2, t)) / (1.0 - std::pow(settings.beta1, t));
    const double m = settings.beta1 * 0.5 + (1.0 - settings.beta1) * 0.125;
    const double v = settings.beta2 * 0.25 + (1.0 - settings.beta2) * 0.125 * 0.125;
    CHECK(row == doctest::Approx(1.0 - rate * m / (std::sqrt(v) + settings.eps)).epsilon(1e-6));
    CHECK(optimizer.row_steps(slot) == counts[slot] + 1);
  }
}
