// Models borrowed per gradient: reused once given back, a new one only when all are lent out.
#include <doctest/doctest.h>

#include <optional>

#include "runtime/model_workspaces.hpp"
#include "actors/training_job.hpp"
#include "tests/actor_fixtures.hpp"

using namespace psgrad;
using namespace psgrad::testing;

namespace {

// A pool of small models that counts in `built` each one it builds.
ModelWorkspaces counting_workspaces(std::size_t& built) {
  return ModelWorkspaces([&built, job = small_job(TrainingMode::sync, 4, 1)] {
    ++built;
    return std::make_unique<Model>(build_model(job, 12, 4).value());
  });
}

}  // namespace

TEST_CASE("workers borrow a model per gradient, and only as many are made as are lent out at once") {
  std::size_t built = 0;
  ModelWorkspaces workspaces = counting_workspaces(built);
  const Model* first = nullptr;
  const Model* second = nullptr;
  {
    const auto a = workspaces.borrow();
    const auto b = workspaces.borrow();
    first = &a.model();
    second = &b.model();
    CHECK(first != second);  // lent at once: two models
  }
  for (int gradient = 0; gradient < 10; ++gradient) {
    const auto lease = workspaces.borrow();
    CHECK((&lease.model() == first || &lease.model() == second));
  }
  {
    const auto a = workspaces.borrow();
    const auto b = workspaces.borrow();
    std::optional<ModelWorkspaces::Lease> c(workspaces.borrow());
    CHECK(&c->model() != &a.model());
    CHECK(&c->model() != &b.model());
  }
  CHECK(built == 3);
  CHECK(workspaces.models_made() == 3);
}

TEST_CASE("models reserved up front are lent without building more") {
  std::size_t built = 0;
  ModelWorkspaces workspaces = counting_workspaces(built);
  workspaces.reserve(2);
  CHECK(built == 2);
  {
    const auto a = workspaces.borrow();
    const auto b = workspaces.borrow();
    CHECK(&a.model() != &b.model());
  }
  workspaces.reserve(2);
  CHECK(built == 2);
  CHECK(workspaces.models_made() == 2);
}
