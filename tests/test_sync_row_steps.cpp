// Tests for SyncRowSteps, a sync table shard's books of each step's row pushes: a worker the run went
// on without is no longer waited for.
#include <doctest/doctest.h>

#include "actors/sync_row_steps.hpp"

using namespace psgrad;

namespace {

RowPush push_of(std::uint32_t worker, std::uint64_t version, float value) {
  SparseRows rows({7}, 2);
  rows.values = {value, value};
  RowPush push;
  push.version = version;
  push.worker = worker;
  push.tables.push_back(TableRows{0, std::move(rows)});
  return push;
}

}  // namespace

TEST_CASE("a sync step stops waiting for a lost worker and keeps the push it made before") {
  SyncRowSteps steps(3, 0, 1, 1, false);
  REQUIRE_FALSE(steps.add_push(push_of(0, 0, 1.0f), 0));
  REQUIRE_FALSE(steps.add_push(push_of(2, 0, 4.0f), 0));
  CHECK_FALSE(steps.gathered(0));  // worker 1 has not pushed
  steps.drop_worker(1);
  REQUIRE(steps.gathered(0));
  steps.sum(0);  // one shard: no squares to tell
  REQUIRE(steps.complete(0));
  const auto step = steps.take(0);
  CHECK(step.gradients[0].values == std::vector<float>{5.0f, 5.0f});

  // The next step: worker 2 pushed before it was lost too, and its push still counts.
  REQUIRE_FALSE(steps.add_push(push_of(2, 1, 2.0f), 1));
  steps.drop_worker(2);
  CHECK_FALSE(steps.gathered(1));  // worker 0 is alive and has not pushed
  REQUIRE_FALSE(steps.add_push(push_of(0, 1, 1.0f), 1));
  REQUIRE(steps.gathered(1));
  steps.sum(1);
  CHECK(steps.take(1).gradients[0].values == std::vector<float>{3.0f, 3.0f});

  // A push from a lost worker is refused, naming it.
  const auto refused = steps.add_push(push_of(1, 2, 1.0f), 2);
  REQUIRE(refused);
  CHECK(refused->find("worker 1") != std::string::npos);
}

TEST_CASE("with backup workers a sync step sums the rows of the workers the dense server took, and drops the rest") {
  SyncRowSteps steps(3, 0, 1, 1, false, true);
  REQUIRE_FALSE(steps.add_push(push_of(0, 0, 1.0f), 0));
  REQUIRE_FALSE(steps.add_push(push_of(1, 0, 2.0f), 0));
  REQUIRE_FALSE(steps.add_push(push_of(2, 0, 4.0f), 0));
  CHECK_FALSE(steps.gathered(0));  // every push is in, but not yet which the step takes
  REQUIRE_FALSE(steps.set_step_workers(0, {2, 0}));
  REQUIRE(steps.gathered(0));
  steps.sum(0);
  CHECK(steps.take(0).gradients[0].values == std::vector<float>{5.0f, 5.0f});  // workers 0 and 2, not 1

  // Told first: the step waits for those workers alone, and a push from another is dropped, not kept.
  REQUIRE_FALSE(steps.set_step_workers(1, {0, 1}));
  REQUIRE_FALSE(steps.add_push(push_of(2, 1, 8.0f), 1));
  REQUIRE_FALSE(steps.add_push(push_of(0, 1, 1.0f), 1));
  CHECK_FALSE(steps.gathered(1));
  REQUIRE_FALSE(steps.add_push(push_of(1, 1, 2.0f), 1));
  REQUIRE(steps.gathered(1));
  steps.sum(1);
  CHECK(steps.take(1).gradients[0].values == std::vector<float>{3.0f, 3.0f});

  // The slow worker's push for a step already taken is dropped, as the dense server dropped its gradient.
  CHECK_FALSE(steps.add_push(push_of(2, 0, 16.0f), 2));
  // A worker beyond any run's limit is refused, naming it.
  const auto refused = steps.set_step_workers(2, {0, 5000});
  REQUIRE(refused);
  CHECK(refused->find("worker 5000") != std::string::npos);
}

TEST_CASE("a worker that joined a sync run has its rows summed from the step the dense server says it joined") {
  SyncRowSteps steps(1, 0, 1, 1, false, true);
  // The joined worker's push may come before the dense server tells of the step it takes part in.
  REQUIRE_FALSE(steps.add_push(push_of(0, 0, 1.0f), 0));
  REQUIRE_FALSE(steps.set_step_workers(0, {0}));
  REQUIRE(steps.gathered(0));
  steps.sum(0);
  CHECK(steps.take(0).gradients[0].values == std::vector<float>{1.0f, 1.0f});
  REQUIRE_FALSE(steps.add_push(push_of(1, 1, 2.0f), 1));
  REQUIRE_FALSE(steps.add_push(push_of(0, 1, 1.0f), 1));
  REQUIRE_FALSE(steps.set_step_workers(1, {0, 1}));
  REQUIRE(steps.gathered(1));
  steps.sum(1);
  CHECK(steps.take(1).gradients[0].values == std::vector<float>{3.0f, 3.0f});
  // Told first, the step waits for the joined worker too.
  REQUIRE_FALSE(steps.set_step_workers(2, {0, 1}));
  REQUIRE_FALSE(steps.add_push(push_of(0, 2, 1.0f), 2));
  CHECK_FALSE(steps.gathered(2));
  REQUIRE_FALSE(steps.add_push(push_of(1, 2, 4.0f), 2));
  REQUIRE(steps.gathered(2));

  // Without being told each step's workers, the shard knows only the run's first ones.
  SyncRowSteps fixed(1, 0, 1, 1, false);
  const auto refused = fixed.add_push(push_of(1, 0, 2.0f), 0);
  REQUIRE(refused);
  CHECK(refused->find("worker 1") != std::string::npos);
}
