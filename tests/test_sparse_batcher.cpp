// Shuffled batches over examples with id fields: each example once an epoch, resumable, bad sets named.
#include <doctest/doctest.h>

#include <algorithm>

#include "model/sparse_batcher.hpp"
#include "tests/sparse_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

// An example's identity across batches: its distractor id and first token.
std::vector<std::pair<std::uint64_t, std::uint64_t>> served(const SparseBatch& batch) {
  std::vector<std::pair<std::uint64_t, std::uint64_t>> examples;
  for (std::size_t e = 0; e < batch.size; ++e)
    examples.emplace_back(batch.fields[1].bag(e)[0], batch.fields[0].bag(e)[0]);
  return examples;
}

}  // namespace

TEST_CASE("sparse batches serve every example once an epoch, its bags and one-hot class together") {
  const auto data = colour_task(50, 3);
  SparseBatcher batches(data, 16, 9);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> epoch;
  for (std::size_t size : {16, 16, 16, 2}) {
    const auto batch = batches.next();
    REQUIRE(batch.size == size);
    REQUIRE(batch.fields.size() == 2);
    CHECK(batch.fields[0].examples() == size);
    CHECK(batch.targets.rows() == static_cast<Eigen::Index>(size));
    CHECK(batch.targets.sum() == static_cast<float>(size));
    const auto examples = served(batch);
    epoch.insert(epoch.end(), examples.begin(), examples.end());
  }
  auto all = served(gather_examples(*data, {}, 0, data->count));
  std::sort(all.begin(), all.end());
  std::sort(epoch.begin(), epoch.end());
  CHECK(epoch == all);
}

TEST_CASE("a sparse batch stream restored from its position serves the same batches") {
  const auto data = colour_task(40, 4);
  SparseBatcher first(data, 16, 2);
  first.next();
  first.next();
  first.next();  // into the second epoch
  const auto position = first.position();
  SparseBatcher second(data, 16, 99);
  second.restore(position);
  for (int i = 0; i < 4; ++i) CHECK(served(first.next()) == served(second.next()));
}

TEST_CASE("a sparse data set without a bag or a class for every example is named as such") {
  auto data = std::make_shared<SparseDataset>(*colour_task(10, 5));
  CHECK_FALSE(sparse_dataset_problem(*data));
  data->labels[3] = 7;
  CHECK(sparse_dataset_problem(*data).value() == "example 3 has label 7, but there are 3 classes");
  data = std::make_shared<SparseDataset>(*colour_task(10, 5));
  data->id_fields[1].offsets.pop_back();
  CHECK(sparse_dataset_problem(*data).value() ==
        "id field 'distractor' does not hold one bag for each of the 10 examples");
  CHECK_THROWS_AS(SparseBatcher(data, 4, 0), std::invalid_argument);
}
