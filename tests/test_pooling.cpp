// Ragged bags of ids and Thinc's reduce_sum / reduce_mean over them.
#include <doctest/doctest.h>

#include <vector>

#include "model/pooling.hpp"
#include "model/ragged_ids.hpp"

using namespace psgrad;

TEST_CASE("RaggedIds keeps each example's bag, empty ones included") {
  RaggedIds field;
  field.add_example({5, 6, 7});
  field.add_example({});
  field.add_example({9});
  CHECK(field.examples() == 3);
  CHECK(field.id_count() == 4);
  CHECK(field.offsets() == std::vector<std::size_t>{0, 3, 3, 4});
  CHECK(field.length(1) == 0);
  CHECK(field.bag(2)[0] == 9);

  auto same = RaggedIds::from_lengths({5, 6, 7, 9}, {3, 0, 1});
  REQUIRE(same.ok());
  CHECK(same->offsets() == field.offsets());
  CHECK(same->ids() == field.ids());
}

TEST_CASE("RaggedIds refuses lengths that do not add up to the ids") {
  const auto bad = RaggedIds::from_lengths({1, 2, 3}, {1, 1});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error() == "bag lengths add up to 2 ids, but there are 3");
}

TEST_CASE("reduce_sum and reduce_mean pool each bag into a row, an empty bag into zeros") {
  const std::vector<std::size_t> offsets = {0, 3, 3, 4};
  const std::vector<float> rows = {1, 2, 3, 4, 8, 16, -5, 7};  // four rows of width 2
  // Written into the middle columns of a 3 x 4 matrix, as a field's block of the concatenation.
  std::vector<float> out(12, 99.0f);
  pool(Pooling::sum, rows.data(), offsets, 2, out.data() + 1, 4);
  CHECK(out == std::vector<float>{99, 12, 22, 99, 99, 0, 0, 99, 99, -5, 7, 99});
  pool(Pooling::mean, rows.data(), offsets, 2, out.data() + 1, 4);
  const float third = static_cast<float>(1.0 / 3.0);
  CHECK(out[1] == third * 1 + third * 3 + third * 8);
  CHECK(out[2] == third * 2 + third * 4 + third * 16);
  CHECK(out[5] == 0.0f);
  CHECK(out[6] == 0.0f);
  CHECK(out[9] == -5.0f);
  CHECK(out[10] == 7.0f);
}

TEST_CASE("pool_backward copies a bag's gradient to each row, scaled by 1/length for the mean") {
  const std::vector<std::size_t> offsets = {0, 2, 2, 3};
  const std::vector<float> d_out = {4, 6, 100, 100, 1, 3};
  std::vector<float> d_rows(6, 0.0f);
  pool_backward(Pooling::sum, d_out.data(), 2, offsets, 2, d_rows.data());
  CHECK(d_rows == std::vector<float>{4, 6, 4, 6, 1, 3});
  pool_backward(Pooling::mean, d_out.data(), 2, offsets, 2, d_rows.data());
  CHECK(d_rows == std::vector<float>{2, 3, 2, 3, 1, 3});
}

TEST_CASE("pooling is named as Thinc's reduce layers are: sum, mean, max, first, last") {
  CHECK(pooling_named("sum") == Pooling::sum);
  CHECK(pooling_named("mean") == Pooling::mean);
  CHECK(pooling_named("max") == Pooling::max);
  CHECK(pooling_named("first") == Pooling::first);
  CHECK(pooling_named("last") == Pooling::last);
  CHECK_FALSE(pooling_named("median").has_value());
  CHECK(std::string(pooling_name(Pooling::mean)) == "mean");
  CHECK(std::string(pooling_name(Pooling::last)) == "last");
}

TEST_CASE("max, first and last pool one row of each bag and send its gradient back to that row alone") {
  // Bags: rows 0-2, none, row 3.
  const std::vector<std::size_t> offsets = {0, 3, 3, 4};
  const std::vector<float> rows = {1, 9, 5, 2, 5, 7, -4, -6};
  std::vector<float> out(6, 99.0f);
  pool(Pooling::max, rows.data(), offsets, 2, out.data(), 2);
  CHECK(out == std::vector<float>{5, 9, 0, 0, -4, -6});
  pool(Pooling::first, rows.data(), offsets, 2, out.data(), 2);
  CHECK(out == std::vector<float>{1, 9, 0, 0, -4, -6});
  pool(Pooling::last, rows.data(), offsets, 2, out.data(), 2);
  CHECK(out == std::vector<float>{5, 7, 0, 0, -4, -6});
  const std::vector<float> d_out = {10, 20, 100, 100, 30, 40};
  std::vector<float> d_rows(8, -1.0f);
  // Column 0's maximum 5 is in rows 1 and 2: the first of them takes it, as NumPy's argmax.
  pool_backward(Pooling::max, d_out.data(), 2, offsets, 2, d_rows.data(), rows.data());
  CHECK(d_rows == std::vector<float>{0, 20, 10, 0, 0, 0, 30, 40});
  pool_backward(Pooling::first, d_out.data(), 2, offsets, 2, d_rows.data());
  CHECK(d_rows == std::vector<float>{10, 20, 0, 0, 0, 0, 30, 40});
  pool_backward(Pooling::last, d_out.data(), 2, offsets, 2, d_rows.data());
  CHECK(d_rows == std::vector<float>{0, 0, 0, 0, 10, 20, 30, 40});
}
