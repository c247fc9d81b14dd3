// The tables' row optimizer from the run's optimizer section: lazy Adam on Adam.v1's settings, or Adagrad.
#include <doctest/doctest.h>

#include "model/table_optimizer.hpp"

using namespace psgrad;

TEST_CASE("lazy Adam takes the run's Adam.v1 settings, defaults filled in") {
  OptimizerSection optimizer;
  optimizer.settings = {{"learn_rate", 0.02}, {"beta2", 0.99}, {"L2", 0.1}, {"grad_clip", 2.0}};
  const auto adam = lazy_adam_settings(optimizer);
  REQUIRE(adam.ok());
  CHECK(adam->learn_rate == 0.02);
  CHECK(adam->beta1 == 0.9);
  CHECK(adam->beta2 == 0.99);
  CHECK(adam->eps == 1e-8);
  CHECK(adam->L2 == 0.1);
  CHECK(adam->grad_clip == 2.0);
  CHECK(table_grad_clip({}, optimizer).value() == 2.0);
  const auto built = build_row_optimizer({}, optimizer, 4);
  REQUIRE(built.ok());
  CHECK((*built)->name() == "LazyAdam");
  CHECK((*built)->width() == 4);
}

TEST_CASE("lazy Adam refuses what it cannot follow, naming the setting") {
  OptimizerSection optimizer;
  optimizer.settings = {{"L2", 0.1}, {"L2_is_weight_decay", false}};
  CHECK(lazy_adam_settings(optimizer).error().find("L2_is_weight_decay") != std::string::npos);
  // use_averages is the dense part's (Thinc's default): the rows step without averages.
  optimizer.settings = {{"use_averages", true}};
  CHECK(lazy_adam_settings(optimizer).ok());
  optimizer.settings = {};
  optimizer.schedule = "warmup_linear.v1";
  CHECK(lazy_adam_settings(optimizer).error().find("warmup_linear.v1") != std::string::npos);
}

TEST_CASE("Adagrad is chosen with its own settings, whatever the run's optimizer") {
  OptimizerSection optimizer;
  optimizer.name = "SGD.v1";
  TableOptimizerChoice choice;
  choice.kind = TableOptimizerKind::adagrad;
  choice.adagrad.grad_clip = 3.0;
  CHECK(table_grad_clip(choice, optimizer).value() == 3.0);
  CHECK(build_row_optimizer(choice, optimizer, 2).value()->name() == "Adagrad");
  CHECK_FALSE(build_row_optimizer({}, optimizer, 2).ok());
}
